"""Sixty-odd secret shapes as they turn up in sessions: each a line of text holding it, and the part of it that
must never reach the disk. Values are made up; each has the shape its issuer uses."""

from __future__ import annotations

from typing import Any

_B64 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # 40 characters, the AWS secret key alphabet
_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
_HEX64 = "9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e"
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
    # issue 40: shapes no path redacted before
    ("curl_basic_auth", "curl -u deploy:Wq3Er5Ty7Ui9 https://api.acme.dev/v1/deploys", "Wq3Er5Ty7Ui9"),
    ("curl_user_flag", "curl -sS --user=ops:Hb4Nj7Mk2Lq9 https://ci.acme.dev/api", "Hb4Nj7Mk2Lq9"),
    (
        "docker_password_stdin",
        "echo 'Zp9Xo8Wn7Vm6' | docker login -u ci --password-stdin registry.acme.dev",
        "Zp9Xo8Wn7Vm6",
    ),
    (
        "helm_password_stdin",
        "printf '%s' Kd8Lp2Qw7Rt4 | helm registry login -u ci --password-stdin oci.acme.dev",
        "Kd8Lp2Qw7Rt4",
    ),
    ("docker_login_p", "docker login -u ci -p Xc5Vb8Nm1Qa4 registry.acme.dev", "Xc5Vb8Nm1Qa4"),
    ("mysql_p_attached", "mysql -u root -pHx7Kq2Lw9Mz4 shop < dump.sql", "Hx7Kq2Lw9Mz4"),
    ("sshpass", "sshpass -p 'Gt6Yh3Uj8Ik1' ssh deploy@10.0.0.7", "Gt6Yh3Uj8Ik1"),
    ("slack_app", f"SLACK_APP_TOKEN is xapp-1-A04BCDE5FGH-4958672013456-{_HEX64}", f"-4958672013456-{_HEX64}"),
    (
        "slack_user",
        "xoxp-2718281828-3141592653-5772156649-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c",
        "2718281828-3141592653-5772156649-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c",
    ),
    (
        "discord_bot",
        "client.login('MTA4NzY1NDMyMTA5ODc2NTQzMg.GkR7sT.q9Vw2Xy4Zb6Nc8Md0Lf1Kh3Jg5Hp7Sr9Tu2Wv4')",
        "MTA4NzY1NDMyMTA5ODc2NTQzMg.GkR7sT.q9Vw2Xy4Zb6Nc8Md0Lf1Kh3Jg5Hp7Sr9Tu2Wv4",
    ),
    (
        "circleci_pat",
        "circleci setup --token CCIPAT_Lk3Mn8Qp2Rs7Tv4Wx_9b8e7d6c5f4a3b2e1d0c9f8a7b6e5d4c3b2a1f0e",
        "CCIPAT_Lk3Mn8Qp2Rs7Tv4Wx_9b8e7d6c5f4a3b2e1d0c9f8a7b6e5d4c3b2a1f0e",
    ),
    (
        "circleci_env",
        "CIRCLE_TOKEN=9b8e7d6c5f4a3b2e1d0c9f8a7b6e5d4c3b2a1f0e",
        "9b8e7d6c5f4a3b2e1d0c9f8a7b6e5d4c3b2a1f0e",
    ),
    ("travis_env", "travis env set TRAVIS_API_TOKEN=Qx7Lm2Nv9Kp4Rt8Sw1Yz6B", "Qx7Lm2Nv9Kp4Rt8Sw1Yz6B"),
    (
        "rubygems",
        "gem push with rubygems_8f3a2b1c9d0e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e",
        "rubygems_8f3a2b1c9d0e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e",
    ),
    (
        "twilio_client",
        "client = Client('AC3f9e1d7c5b3a1f9e7d5c3b1a9f7e5d3c', 'b7e4f9a1c3d5e6f8a0b2c4d6e8f0a1b3')",
        "b7e4f9a1c3d5e6f8a0b2c4d6e8f0a1b3",
    ),
    ("twilio_env", "TWILIO_AUTH_TOKEN=e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6", "e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6"),
    (
        "azure_sql",
        "Server=tcp:shop.database.windows.net,1433;Database=shop;User ID=app;Password=Vb7!Nm3#Qw9x;Encrypt=True;",
        "Vb7!Nm3#Qw9x",
    ),
    (
        "azure_service_bus",
        "Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=Root;"
        "SharedAccessKey=Kp3Lm8Nq2Rs7Tv4Wx9Yz1Ab6Cd5Ef0Gh2Ij8Kl4Mn=",
        "Kp3Lm8Nq2Rs7Tv4Wx9Yz1Ab6Cd5Ef0Gh2Ij8Kl4Mn=",
    ),
    (
        "azure_sas",
        "https://shop.blob.core.windows.net/c/x.zip?sv=2022-11-02&ss=b&sig=Zx8Cv7Bn6Mq5Wr4Ty3Ui2Op1As0DfGhJkLmNoPqRs%3D",
        "Zx8Cv7Bn6Mq5Wr4Ty3Ui2Op1As0DfGhJkLmNoPqRs",
    ),
    (
        "azure_client_secret",
        "AZURE_CLIENT_SECRET=Qm8~Xr2.Lw9_Vn4-Tb7Kz1Hc6Jd3Fs5Gp0Ya",
        "Qm8~Xr2.Lw9_Vn4-Tb7Kz1Hc6Jd3Fs5Gp0Ya",
    ),
    ("env_export_secret", "export SECRET=Hq4Mz8Rk2Vw6Xn", "Hq4Mz8Rk2Vw6Xn"),
    ("dotenv_api_key", "API_KEY=3f7a9c2e5b8d1f4a6c9e2b5d8f1a4c7e", "3f7a9c2e5b8d1f4a6c9e2b5d8f1a4c7e"),
    ("python_annotated", 'API_KEY: str = "Lw8Qz3Nx7Rv2Tb5Ym"', "Lw8Qz3Nx7Rv2Tb5Ym"),
    ("php_variable", '$password = "Kq7Wm2Xr9Lp4";', "Kq7Wm2Xr9Lp4"),
    ("pgpassword", "PGPASSWORD=Fj4Kl9Qm2Xz7 psql -h db -U app", "Fj4Kl9Qm2Xz7"),
    ("url_password_slash_at", "psql postgres://user:p@ss/w0rd@db.internal/shop", "p@ss/w0rd"),
    ("mailgun", "MAILGUN key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    (
        "sentry_dsn",
        "dsn https://4f8a2c6e9b1d3f5a7c9e2b4d6f8a0c1e@o123456.ingest.sentry.io/7654321",
        "4f8a2c6e9b1d3f5a7c9e2b4d6f8a0c1e",
    ),
    ("vault", "vault login hvs.CAESIJx7Lm2Nv9Kp4Rt8Sw1Yz6Bc3Df5Gh0Jk", "hvs.CAESIJx7Lm2Nv9Kp4Rt8Sw1Yz6Bc3Df5Gh0Jk"),
    ("databricks", "databricks token dapi1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d", "dapi1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"),
    (
        "age_key",
        "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS3XQ5M8W",
        "QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS3XQ5M8W",
    ),
    (
        "github_token_as_url_user",
        "git remote set-url origin https://x-access-token:Tq9Wm4Xr7Lp2Vn5Kb8Hc1Jd6@github.com/o/r.git",
        "Tq9Wm4Xr7Lp2Vn5Kb8Hc1Jd6",
    ),
]

# Text that looks like a secret but is none: it must come back as it went in.
LOOK_ALIKES: list[str] = [
    "commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 on main",
    "session 0b7c3a52-5d1e-4a57-9b61-3f0d1c2e4a10 resumed",
    "/home/me/src/app/internal/auth/token_store.go",
    "Fixed the password reset flow in auth/reset.py",
    "docker run -u 1000:1000 -v $PWD:/src img",
    "docker run --user node:node app",
    'docker run --user "$(id -u):$(id -g)" img',
    "git push -u origin main",
    "curl -u $USER:$TOKEN https://api.acme.dev",
    "echo $CR_PAT | docker login ghcr.io -u me --password-stdin",
    "cat ~/pw.txt | docker login --password-stdin -u me",
    "mysql -u root -p shop",
    "psql -U app -h db -p 5432",
    "ssh -p 2222 login@host",
    "git clone git@github.com:acme/app.git",
    "sha256:9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e",
    "a key-value store with max_tokens=1024",
    "echo 'hello world' | grep hello",
    "see https://github.com/acme/app/commit/3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "go test ./cmd/entire/cli/... -run TestLogin -p 1",
    "  userPrivateKey: Uint8Array,",  # real sessions (cipher-box): declarations and paths, not values
    "let key = SigningKey::generate(&mut OsRng);",
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
