"""Forty-odd secret shapes as they turn up in sessions: each a line of text holding it, and the part of it that
must never reach the disk. Values are made up; each has the shape its issuer uses."""

from __future__ import annotations

from typing import Any

_B64 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # 40 characters, the AWS secret key alphabet
_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

# (name, text carrying the secret, the secret itself)
SECRETS: list[tuple[str, str, str]] = [
    ("aws_access_key", "aws configure set aws_access_key_id AKIAIOSFODNN7QZXR4WB", "AKIAIOSFODNN7QZXR4WB"),
    ("aws_session_key", "the role gave ASIAY34FZKBOKMUTVV7A for an hour", "ASIAY34FZKBOKMUTVV7A"),
    ("aws_secret", f"aws_secret_access_key = {_B64}", _B64),
    ("aws_secret_json", f'"SecretAccessKey": "{_B64[::-1]}"', _B64[::-1]),
    (
        "github_classic",
        "git clone https://ghp_R8f2kQ9zLm4Xv7Tn1Bc6Wd3Ys5Hj0Pa2Ue9K@github.com/o/r",
        "ghp_R8f2kQ9zLm4Xv7Tn1Bc6Wd3Ys5Hj0Pa2Ue9K",
    ),
    ("github_oauth", "GH_TOKEN=gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    (
        "github_fine_grained",
        "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
    ),
    (
        "github_app",
        "installation token ghs_4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0Ab2Cd4E",
        "ghs_4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0Ab2Cd4E",
    ),
    ("gitlab", "CI_JOB_TOKEN is glpat-xY7vQ2mN9kL4pR8sT1wZ", "glpat-xY7vQ2mN9kL4pR8sT1wZ"),
    (
        "anthropic",
        "export ANTHROPIC_API_KEY=sk-ant-api03-Xq7Lm2Nv9Kp4Rt8Sw1Yz6Bc3Df5Gh0Jk-AbCdEfGh",
        "sk-ant-api03-Xq7Lm2Nv9Kp4Rt8Sw1Yz6Bc3Df5Gh0Jk-AbCdEfGh",
    ),
    (
        "anthropic_admin",
        "admin key sk-ant-admin01-Pq8Rs2Tu4Vw6Xy8Za0Bc2De4Fg6Hi8Jk",
        "sk-ant-admin01-Pq8Rs2Tu4Vw6Xy8Za0Bc2De4Fg6Hi8Jk",
    ),
    (
        "openai_project",
        "OPENAI_API_KEY: sk-proj-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7",
        "sk-proj-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7",
    ),
    (
        "openai_legacy",
        "used sk-Zx9Cv8Bn7Mq6Wr5Ty4Ui3Op2As1Df0GhJkLmNoPq",
        "sk-Zx9Cv8Bn7Mq6Wr5Ty4Ui3Op2As1Df0GhJkLmNoPq",
    ),
    ("jwt", f"curl -H 'X-Session: {_JWT}' https://api.example", _JWT),
    ("bearer", "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("basic_auth", "Authorization: Basic dXNlcjpodW50ZXIyMDI0c2VjcmV0", "dXNlcjpodW50ZXIyMDI0c2VjcmV0"),
    ("rsa_private_key", f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}\n-----END RSA PRIVATE KEY-----", _PEM_BODY),
    (
        "openssh_private_key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{_PEM_BODY[:20]}\n"
        "-----END OPENSSH PRIVATE KEY-----",
        f"b3BlbnNzaC1rZXktdjEAAAAA{_PEM_BODY[:20]}",
    ),
    ("pkcs8_private_key", f"-----BEGIN PRIVATE KEY-----\nQ{_PEM_BODY}\n-----END PRIVATE KEY-----", f"Q{_PEM_BODY}"),
    ("url_password_plain", "DATABASE_URL=postgres://app:hunter2pass@db.internal:5432/shop", "hunter2pass"),
    ("url_password_slash", "mysql://root:pa/ss/w0rd@10.0.0.5/db", "pa/ss/w0rd"),
    ("url_password_at", "redis://default:p@ssw0rd!@cache:6379/0", "p@ssw0rd!"),
    ("url_password_colon", "amqp://guest:gu:est:pw9@rabbit:5672/", "gu:est:pw9"),
    ("url_password_percent", "mongodb://admin:s3cr%2Ft%40pw@mongo:27017/", "s3cr%2Ft%40pw"),
    ("env_password", "DB_PASSWORD=Tr0ub4dor&3horse", "Tr0ub4dor&3horse"),
    ("env_secret_quoted", 'export APP_SECRET="q8Zr2Lw9Xn4Vb7Km1"', "q8Zr2Lw9Xn4Vb7Km1"),
    ("env_api_key", "STRIPE_API_KEY='zk4Wq9Lm2Rv8Tn1Bx'", "zk4Wq9Lm2Rv8Tn1Bx"),
    ("json_password", '{"username": "svc", "password": "Qp9!zX2#mL7v"}', "Qp9!zX2#mL7v"),
    ("yaml_token", "  auth_token: 7h3Qu1ckBr0wnF0x", "7h3Qu1ckBr0wnF0x"),
    ("cli_password", "mysql -u root --password=R00tPw!2024 shop", "R00tPw!2024"),
    (
        "slack_bot",
        "SLACK_BOT=xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "slack_webhook",
        "posted to https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/zYxWvUtSrQpOnMlKjIhGfEdC",
        "T0ABCDEFG/B0HIJKLMN/zYxWvUtSrQpOnMlKjIhGfEdC",
    ),
    ("stripe_live", "charged with sk_live_51HqLm2Nv9Kp4Rt8Sw1Yz6Bc", "sk_live_51HqLm2Nv9Kp4Rt8Sw1Yz6Bc"),
    ("stripe_restricted", "rk_test_26PHem9AhJZvU623DfE1x4sd used", "rk_test_26PHem9AhJZvU623DfE1x4sd"),
    (
        "stripe_webhook",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw is the signing secret",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ),
    ("google_api_key", "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    (
        "gcp_service_account",
        '{"type": "service_account", "private_key_id": "4e8c1f0a9b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f", '
        f'"private_key": "-----BEGIN PRIVATE KEY-----\\nZ{_PEM_BODY}\\n-----END PRIVATE KEY-----\\n"}}',
        f"Z{_PEM_BODY}",
    ),
    (
        "gcp_key_id",
        '"private_key_id": "4e8c1f0a9b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"',
        "4e8c1f0a9b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f",
    ),
    ("google_oauth_secret", "client_secret GOCSPX-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr", "GOCSPX-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr"),
    ("huggingface", "HF_TOKEN hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    (
        "npm",
        "//registry.npmjs.org/:_authToken=npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    ),
    (
        "pypi",
        "password = pypi-AgEIcHlwaS5vcmcCJDkwNjg3YmQ4LTAwZTctNDhlNi1iNzk0LWU3ZDY4ZTYwYmQ0MgACKlsz",
        "pypi-AgEIcHlwaS5vcmcCJDkwNjg3YmQ4LTAwZTctNDhlNi1iNzk0LWU3ZDY4ZTYwYmQ0MgACKlsz",
    ),
    (
        "sendgrid",
        "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",
        "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",
    ),
    (
        "azure_storage",
        "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    ),
    ("telegram", "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"),
    ("digitalocean", "dop_v1_" + "a3f9" * 16, "dop_v1_" + "a3f9" * 16),
    ("private_block", "<private>my home address is 12 Elm Street</private>", "12 Elm Street"),
]


def plant_in_session(session: Any) -> None:
    """Every shape in a prompt, a failing command, its output and the agent's reply: one prompt each, so the
    session holds len(SECRETS) episodes once captured (`session` is a tests/transcripts SessionWriter)."""
    for name, text, _ in SECRETS:
        session.prompt(f"the {name} check fails: {text}")
        session.bash(f"echo '{text}' && ./check_{name}.sh", f"checking {text}\nError: rejected {text}", ok=False)
        session.say(f"The {name} check passes now; it was given {text}.")


def found_in(raw: bytes) -> list[str]:
    """The names of the shapes whose secret occurs in `raw`."""
    return [name for name, _, secret in SECRETS if secret.encode() in raw]
