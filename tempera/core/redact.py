"""Secret redaction, applied to everything taken from a transcript before it is stored, embedded, indexed or sent
to an LLM. Each secret becomes a typed placeholder (`[REDACTED:github_token]`) so memory keeps the fact that a
token was there without keeping the token. Standard library only.

Order matters: whole blocks first (`<private>`, private keys), then tokens with a recognisable shape, then
credentials inside URLs, then values assigned to secret-sounding names (`DB_PASSWORD=...`, `"api_key": "..."`).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

PLACEHOLDER = "[REDACTED:{kind}]"


def placeholder(kind: str) -> str:
    return PLACEHOLDER.format(kind=kind)


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the group that holds the secret (0 = the whole match)
    # text every match holds (`xapp-`): a text without it is skipped at the cost of a substring search, far
    # cheaper than a regex scan, so a rule for a rare shape costs a prompt almost nothing
    needs: str = ""


def _rule(kind: str, regex: str, group: int = 0, flags: int = 0, needs: str = "") -> Rule:
    return Rule(kind, re.compile(regex, flags), group, needs)


# A value that is clearly not a secret: a reference to one, a template slot, an already redacted value, the type a
# declaration gives it (`userPrivateKey: Uint8Array`, `api_key: str`).
_NOT_A_VALUE = re.compile(
    r"^(?:\$|<|\{\{|%\(|\[REDACTED|\*+$|x+$|null$|none$|true$|false$|undefined$|"
    r"(?:&?str|string|bytes|bytearray|buffer|uint8array|cryptokey|keyobject|secretstr|number|bool|boolean|any|"
    r"unknown|object|option<.*>|vec<u8>)[?]?$)",
    re.I,
)

# A secret-sounding name ends in one of these words ("DB_PASSWORD", "apiToken", "aws_secret_access_key"),
# never continues into a longer word ("passed", "tokens", "tokenizer").
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|secret[_-]?key|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key(?:[_-]?id)?|client[_-]?secret|credentials?|auth[_-]?key|session[_-]?key|signing[_-]?key|"
    r"encryption[_-]?key|account[_-]?key|master[_-]?key|sas[_-]?token)(?![A-Za-z0-9])"
)
_NAME = rf"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?{_SECRET_NAME}"

RULES: tuple[Rule, ...] = (
    _rule("private", r"<private>.*?(?:</private>|\Z)", flags=re.S | re.I),
    _rule(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        flags=re.S,
        needs="PRIVATE KEY",
    ),
    _rule("anthropic_key", r"\bsk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{16,}", needs="sk-ant-"),
    _rule("openai_key", r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{16,}", needs="sk-"),
    _rule("openai_key", r"\bsk-[A-Za-z0-9]{32,}\b", needs="sk-"),
    _rule("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    _rule(
        "aws_secret",
        r"(?i:aws_?secret(?:_access)?_?key|secretaccesskey)[\"']?\s*[:=]\s*[\"']?"
        r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        group=1,
    ),
    _rule("github_token", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", needs="_"),
    _rule("github_token", r"\bgithub_pat_[A-Za-z0-9_]{40,}\b", needs="github_pat_"),
    _rule("gitlab_token", r"\bgl(?:pat|dt|rt|ptt|ft|cbt|imt|agent|oas)-[A-Za-z0-9_-]{20,}"),
    _rule("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", needs="xox"),
    _rule("slack_token", r"\bxapp-\d+-[A-Za-z0-9-]{20,}", needs="xapp-"),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}",
        needs="hooks.slack.com",
    ),
    _rule("stripe_key", r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}\b", needs="_"),
    _rule("stripe_key", r"\bwhsec_[A-Za-z0-9]{24,}\b", needs="whsec_"),
    _rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", needs="AIza"),
    _rule("google_oauth", r"\bGOCSPX-[A-Za-z0-9_-]{20,}", needs="GOCSPX-"),
    _rule("google_oauth", r"\bya29\.[A-Za-z0-9_-]{20,}", needs="ya29."),
    _rule("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b", needs="hf_"),
    _rule("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", needs="npm_"),
    _rule("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", needs="pypi-AgE"),
    _rule("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", needs="SG."),
    _rule("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b", needs="_v1_"),
    _rule("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", needs="shp"),
    _rule("linear_key", r"\blin_api_[A-Za-z0-9]{40}\b", needs="lin_api_"),
    _rule("rubygems_token", r"\brubygems_[a-f0-9]{48}\b", needs="rubygems_"),
    _rule("circleci_token", r"\bCCIP(?:AT|RJ)_[A-Za-z0-9]{16,}_[a-f0-9]{40}\b", needs="CCIP"),
    _rule("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", needs="hv"),
    _rule("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d+)?\b", needs="dapi"),
    _rule("age_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}\b", needs="AGE-SECRET-KEY-1"),
    _rule("mailgun_key", r"\bkey-(?=[a-z]*\d)[0-9a-z]{32}\b", needs="key-"),
    # a bot token: the bot's id in base64 (a snowflake, so it starts M, N or O), a timestamp, an HMAC
    _rule(
        "discord_token",
        r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])",
        needs=".",
    ),
    # the auth token passed after the account SID (`Client("AC…", "…")`)
    _rule("twilio_token", r"\bAC[a-f0-9]{32}[\"']?\s*,\s*[\"']?([a-f0-9]{32})\b", group=1, needs="AC"),
    _rule("telegram_token", r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])", needs=":AA"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", needs="eyJ"),
    _rule("bearer_token", r"(?i:\bbearer\s+)((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)", group=1),
    _rule("basic_auth", r"(?i:authorization\s*[:=]\s*[\"']?basic\s+)([A-Za-z0-9+/]{8,}=*)", group=1),
    _rule("azure_key", r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}=*)", group=1),
    _rule("azure_sas", r"[?&]sig=([A-Za-z0-9%/+=]{20,})", group=1, needs="sig="),
    # The password runs to the last `@` of the URL, so `/`, `@` and `:` inside it are redacted with it; a port
    # followed by a path (`host:8080/users/@me`) is no password.
    _rule(
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"'<>`]*:(?!\d+(?:/|$))([^\s\"'<>`]+)@",
        group=1,
        needs="://",
    ),
    # a token alone before the host (`https://<token>@host`, a Sentry DSN): letters and digits, 20 or more
    _rule(
        "url_token",
        r"\b[A-Za-z][A-Za-z0-9+.-]*://((?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,})@",
        group=1,
        needs="://",
    ),
    _rule("cli_password", rf"(?i:--[\w-]*{_SECRET_NAME})(?:=|\s+)([^\s\"'-][^\s\"']{{3,}})", group=1),
    # `curl -u user:password`, `--user=user:password` (not `docker run -u node:node`, a user and group)
    _rule(
        "cli_password",
        r"\bcurl\b[^\n|;&]*?(?<![\w-])(?:-u|--user)(?:=|[ \t]+)?[\"']?[^\s:\"'$-][^\s:\"'$]*:"
        r"(?![0-9]+(?![^\s\"']))([^\s\"'@]{3,})",
        group=1,
        needs="curl",
    ),
    _rule("cli_password", r"\bmysql(?:dump|admin)?\b[^\n|;&]*?[ \t]-p([^\s\"'-][^\s\"']{2,})", group=1, needs="mysql"),
    _rule("cli_password", r"\bsshpass[ \t]+-p[ \t]*[\"']?([^\s\"'-][^\s\"']{2,})", group=1, needs="sshpass"),
    _rule(
        "cli_password",
        r"\blogin\b[^\n|;&]*?[ \t]-p(?:=|[ \t]+)[\"']?((?![0-9]+\b)[^\s\"'-][^\s\"']{2,})",
        group=1,
        needs="login",
    ),
    # a password piped or fed to a `--password-stdin` login (`echo 'pw' | docker login -u ci --password-stdin`)
    _rule(
        "cli_password",
        r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?:[\"']%s(?:\\n)?[\"'][ \t]+)?[\"']?([^\s\"'|]{4,})[\"']?[ \t]*\|"
        r"[^\n]*?--password-stdin",
        group=1,
        needs="--password-stdin",
    ),
    _rule("cli_password", r"--password-stdin[ \t]*<<<[ \t]*[\"']?([^\s\"']{4,})", group=1, needs="--password-stdin"),
    # with a type between (`API_KEY: str = "…"`, `token: Option<&str> = Some("…")` is not taken)
    _rule("secret", rf"(?i:{_NAME})[\"']?\s*(?::[ \t]*[\w.|\[\]]{{1,30}}[ \t]*=|[:=])\s*\"([^\"\n]{{3,}})\"", group=1),
    _rule("secret", rf"(?i:{_NAME})[\"']?\s*(?::[ \t]*[\w.|\[\]]{{1,30}}[ \t]*=|[:=])\s*'([^'\n]{{3,}})'", group=1),
    # a value is never itself a name being assigned (`token: auth_token: abc`): the next name is matched instead;
    # not after `::` (a path: `SigningKey::generate`) nor a `$` (a reference: `-v $PWD:/src`; a PHP `$password =`
    # is quoted, taken above)
    _rule("secret", rf"(?i:(?<!\$){_NAME})(?:=|:(?!:)[ \t]*)([^\s\"',;)\]}}`]{{4,}}+)(?<![:=])", group=1),
)


MIN_SECRET_TEXT = 8  # the shortest text any rule can match (`pwd=abcd`)
# The `secret` rules each need a secret-sounding name followed by `:` or `=` (after an optional quote and space):
# a text without one is left as it is by all of them, so one search decides it. They cost two thirds of the
# redaction of real transcripts, whose texts mostly hold no such name.
_ASSIGNED_NAME = re.compile(rf"(?i:{_SECRET_NAME})[\"']?\s*[:=]")

# Texts redacted inside `memo()`, with the kinds found in each (see there).
_MEMO: ContextVar[dict[str, Any] | None] = ContextVar("redact_memo", default=None)


def redact(text: str, counts: Counter[str] | None = None) -> str:
    """The text with every secret replaced by a typed placeholder; `counts` (when given) tallies the kinds."""
    if len(text) < MIN_SECRET_TEXT:
        return text
    memo = _MEMO.get()
    if memo is None:
        return _redact(text, counts)
    if text not in memo:
        found: Counter[str] = Counter()
        memo[text] = (_redact(text, found), found)
    out, kinds = memo[text]
    if counts is not None:
        counts.update(kinds)
    return out


def _redact(text: str, counts: Counter[str] | None) -> str:
    assigned: bool | None = None  # looked for at the first `secret` rule, in the text as the rules before left it
    for rule in RULES:
        if rule.needs and rule.needs not in text:
            continue
        if rule.kind == "secret":
            if assigned is None:
                assigned = _ASSIGNED_NAME.search(text) is not None
            if not assigned:
                continue
        text = rule.pattern.sub(_replacer(rule, counts), text)
    return text


@contextmanager
def memo(table: dict[str, Any] | None = None) -> Iterator[None]:
    """Within the block (and this thread), a text redacted once is not redacted again: the result and the kinds it
    counted are kept, in `table` when given (to go on with it in a later block). A capture redacts the same text
    up to four times (a tool output in its turn's signals, its draft, the episode's own `redacted()` pass, its
    facts); the memo ends with its owner, so no secret outlives the capture in memory."""
    token = _MEMO.set({} if table is None else table)
    try:
        yield
    finally:
        _MEMO.reset(token)


def _replacer(rule: Rule, counts: Counter[str] | None) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        secret = m.group(rule.group)
        if rule.group and _NOT_A_VALUE.match(secret):
            return m.group(0)
        if counts is not None:
            counts[rule.kind] += 1
        if rule.group == 0:
            return placeholder(rule.kind)
        start, end = m.start(rule.group) - m.start(), m.end(rule.group) - m.start()
        whole = m.group(0)
        return whole[:start] + placeholder(rule.kind) + whole[end:]

    return replace


def redact_data(value: Any, counts: Counter[str] | None = None, *, skip: frozenset[str] = frozenset()) -> Any:
    """Redact every string value inside nested dicts / lists; values under a key in `skip` (ids, timestamps:
    our own fields, never user text) are left as they are."""
    if isinstance(value, str):
        return redact(value, counts)
    if isinstance(value, dict):
        return {k: v if k in skip else redact_data(v, counts, skip=skip) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v, counts, skip=skip) for v in value]
    return value


class RedactingFormatter(logging.Formatter):
    """A log line as `logging.Formatter` writes it, traceback included, with its secrets redacted: what a log
    repeats (a tool error naming its argument, an exception quoting its input) is as redacted as what is stored."""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.args, tuple):  # before `%r` escapes the quotes around a value
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return redact(super().format(record))
