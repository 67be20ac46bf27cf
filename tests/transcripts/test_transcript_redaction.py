"""Secrets never reach the database: a corpus of secret shapes is placed everywhere a transcript can carry text,
imported, and then looked for in the raw bytes of the database file and its WAL (FTS shadow tables included)."""

from __future__ import annotations

import random
import string
from collections import Counter

import pytest
from transcript_writer import SessionWriter

from support.secrets import LOOK_ALIKES, SECRETS
from tempera.core.memory import Memory
from tempera.core.redact import RULES, memo, redact
from tempera.transcripts import capture_transcript

_rng = random.Random(20250602)


def _s(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
PEM_BODY = "\n".join(_s(64, B64) for _ in range(4))

# (name, text as it would appear, the secret inside it)
CORPUS: list[tuple[str, str, str]] = []


def _add(name: str, template: str, secret: str) -> None:
    CORPUS.append((name, template.format(secret), secret))


_add("anthropic api key", "export ANTHROPIC_API_KEY={}", "sk-ant-api03-" + _s(90))
_add("anthropic key in prose", "use the key {} for the demo", "sk-ant-api03-" + _s(40) + "-" + _s(20))
_add("anthropic admin key", "admin: {}", "sk-ant-admin01-" + _s(80))
_add("openai project key", 'client = OpenAI(api_key="{}")', "sk-proj-" + _s(100))
_add("openai legacy key", "OPENAI_KEY {}", "sk-" + _s(48))
_add("openai service account", "{} is the svc key", "sk-svcacct-" + _s(60))
_add("aws access key id", "aws_access_key_id = {}", "AKIA" + _s(16, string.ascii_uppercase + string.digits))
_add("aws temporary key id", "AccessKeyId: {}", "ASIA" + _s(16, string.ascii_uppercase + string.digits))
_add("aws secret key", "aws_secret_access_key = {}", _s(40, B64))
_add("aws secret env", "AWS_SECRET_ACCESS_KEY={} aws s3 ls", _s(40, B64))
_add("github classic pat", "git clone https://github.com/acme/x (token {})", "ghp_" + _s(36))
_add("github oauth token", "GH_AUTH {}", "gho_" + _s(36))
_add("github app token", "installation token {}", "ghs_" + _s(36))
_add("github fine-grained pat", "token: {}", "github_pat_" + _s(22) + "_" + _s(59))
_add("gitlab pat", "PRIVATE-TOKEN: {}", "glpat-" + _s(20))
_add("gitlab runner token", "register with {}", "glrt-" + _s(24))
_add("slack bot token", "SLACK {}", "xoxb-" + _s(11, string.digits) + "-" + _s(13, string.digits) + "-" + _s(24))
_add("slack user token", "slack user {}", "xoxp-" + _s(12, string.digits) + "-" + _s(24))
_add("slack webhook", "curl -X POST {}", "https://hooks.slack.com/services/T" + _s(10) + "/B" + _s(10) + "/" + _s(24))
_add("stripe live secret", "Stripe.api_key = {}", "sk_live_" + _s(24))
_add("stripe restricted key", "rk {}", "rk_live_" + _s(30))
_add("stripe test secret", "STRIPE {}", "sk_test_" + _s(26))
_add("stripe webhook secret", "endpoint secret {}", "whsec_" + _s(32))
_add("google api key", "maps?key={}", "AIza" + _s(35))
_add("google oauth client secret", "client_secret {}", "GOCSPX-" + _s(28))
_add("google oauth access token", "Authorization: OAuth {}", "ya29." + _s(60))
_add("huggingface token", "huggingface-cli login --token {}", "hf_" + _s(34))
_add("npm token", "//registry.npmjs.org/:_authToken={}", "npm_" + _s(36))
_add("pypi token", "TWINE_PASSWORD {}", "pypi-AgEIcHlwaS5vcmc" + _s(60))
_add("sendgrid key", "SENDGRID {}", "SG." + _s(22) + "." + _s(43))
_add("digitalocean token", "doctl auth init -t {}", "dop_v1_" + _s(64, HEX))
_add("shopify token", "X-Shopify-Access-Token {}", "shpat_" + _s(32, HEX))
_add("telegram bot token", "bot{}/sendMessage", _s(9, string.digits) + ":AA" + _s(33))
_add("jwt", "cookie session={}", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + _s(43))
_add("bearer token", "curl -H 'Authorization: Bearer {}' https://api.acme.dev", _s(20) + "1" + _s(12))
_add("basic auth header", "Authorization: Basic {}", _s(28, B64) + "==")
_add("azure storage key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};", _s(86, B64) + "==")
_add("rsa private key", "key file:\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n", PEM_BODY)
_add(
    "openssh private key",
    "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
    "b3BlbnNzaC1rZXktdjE" + _s(60, B64),
)
_add("truncated private key", "cat id_ed25519\n-----BEGIN PRIVATE KEY-----\n{}", "MC4CAQAwBQYDK2VwBCIEI" + _s(30, B64))
_add("env password", "DB_PASSWORD={}", "hunter2-" + _s(10))
_add(".env secret key", "DEBUG=true\nSECRET_KEY={}\nALLOWED_HOSTS=*", "django-insecure-" + _s(30))
_add("quoted json password", '{{"user": "app", "password": "{}"}}', "Tr0ub4dor&" + _s(8))
_add("yaml token", "deploy:\n  api_token: {}\n", _s(32))
_add("python assignment", "DB_PASS = 'x'\ndbPassword = \"{}\"", "s3cr3t-" + _s(12))
_add("cli password flag", "mysql -u root --password={} shop", "pw" + _s(14))
_add("postgres url", "DATABASE_URL=postgres://shop:{}@db.internal:5432/shop", "pg" + _s(16))
_add("mongodb srv url", "mongodb+srv://admin:{}@cluster0.abc.mongodb.net/", "mg" + _s(16))
_add("redis url", "redis://:{}@cache:6379/0", "rd" + _s(20))
_add("amqp url", "amqp://guest:{}@rabbit:5672", "mq" + _s(14))
_add("https url credentials", "pip install --index-url https://build:{}@pypi.acme.dev/simple x", "ix" + _s(18))
_add("url password with /", "DATABASE_URL=postgres://shop:{}@db.internal:5432/shop", "Pa/" + _s(12) + "/9")
_add("url password with @", "mysql://root:{}@db:3306/app", "Pa@" + _s(12) + "@9")
_add("url password with :", "redis://admin:{}@cache:6379/1", "Pa:" + _s(12) + ":9")
_add("url password with %40", "amqp://guest:{}@rabbit:5672", "Pa%40" + _s(12))
_add("url password with / and @", "psql postgres://u:{}@db:5432/x -c 'select 1'", "p@ss/w0rd" + _s(8))
_add("private tag", "notes <private>my bank PIN is {}</private> done", "PIN-" + _s(10))
_add("unclosed private tag", "context <private>door code {}", "DOOR-" + _s(10))

BENIGN = [
    "Fixed the password reset flow in auth/reset.py",
    "max_tokens=1024 and input_tokens: 5000",
    "commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 on main",
    "session 0b7c3a52-5d1e-4a57-9b61-3f0d1c2e4a10 resumed",
    "Bearer authentication is configured in settings.py",
    "tokenizer: bert-base-uncased",
    "self.password = password",
    "password=$DB_PASSWORD ./run.sh",
    "Tests passed: `python3 test_calc.py`.",
    "see https://docs.acme.dev/setup#step-2",
    "the API runs at http://localhost:8080/users/@me and https://acme.dev:443/a@b",
]


def test_corpus_has_at_least_40_shapes() -> None:
    assert len(CORPUS) >= 40
    assert len({name for name, _, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("name,text,secret", CORPUS + SECRETS, ids=[c[0] for c in CORPUS + SECRETS])
def test_each_shape_is_redacted(name: str, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out
    assert secret[len(secret) // 4 : len(secret) // 4 + 10] not in out


@pytest.mark.parametrize("text", BENIGN + LOOK_ALIKES)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_the_text_a_rule_needs_is_in_every_match_of_it() -> None:
    """A rule is skipped on a text without its `needs` (cheaper than the scan): that must lose no match."""
    for rule in RULES:
        for _, text, _ in CORPUS + SECRETS:
            for m in rule.pattern.finditer(text):
                assert rule.needs in m.group(0), (rule.kind, m.group(0))


def test_a_memo_gives_each_text_and_its_counts_again() -> None:
    """Inside `memo` a text is redacted once (a capture meets the same text up to four times): each later call
    returns the same text and counts the same kinds again, as a call outside the memo does."""
    texts = [text for _, text, _ in CORPUS] + BENIGN
    alone: Counter[str] = Counter()
    expected = [redact(t, alone) for t in texts]
    counted: Counter[str] = Counter()
    with memo():
        assert [redact(t, counted) for t in texts] == expected
        assert [redact(t, counted) for t in texts] == expected
    assert counted == alone + alone and sum(alone.values()) >= len(CORPUS)


def _fragments(secret: str) -> list[bytes]:
    mid = len(secret) // 2
    return [secret.encode(), secret[mid - 6 : mid + 6].encode()]


def test_no_secret_anywhere_in_the_database_file(kw_memory: Memory, session: SessionWriter) -> None:
    texts = [text for _, text, _ in CORPUS]
    for n, text in enumerate(texts):
        where = n % 5
        session.prompt(f"step {n}: {text}" if where == 0 else f"step {n}: handle the {n}th config")
        if where == 1:
            session.bash(f"echo {text!r} > .env", "")
        elif where == 2:
            session.bash("./deploy.sh", f"deploy failed\nError: {text}", ok=False)
        elif where == 3:
            session.tool(
                "Write",
                {"file_path": f"/nonexistent/work/shop/conf{n}.txt", "content": text},
                f"File created successfully at: /nonexistent/work/shop/conf{n}.txt",
            )
        session.say(f"Done with step {n}. {text}" if where == 4 else f"Done with step {n}.")
    result = capture_transcript(kw_memory, session.path)
    assert len(result.added) == len(texts)
    kw_memory.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db_file = kw_memory.db.path
    raw = b"".join(p.read_bytes() for p in (db_file, db_file.with_name(db_file.name + "-wal")) if p.exists())
    assert b"episodes_fts_data" in raw and b"REDACTED" in raw  # the FTS shadow tables are in what we read
    leaked = [name for name, _, secret in CORPUS if any(f in raw for f in _fragments(secret))]
    assert leaked == []
