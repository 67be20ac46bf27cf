"""File extension -> language, one table for transcripts (domain tags), self-improvement (language-scoped
transfer) and git ingestion (a file's :language)."""

LANGUAGES: dict[str, str] = {
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".css": "css",
    ".scss": "css", ".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".heex": "elixir", ".go": "go",
    ".html": "html", ".java": "java", ".cjs": "javascript", ".js": "javascript", ".jsx": "javascript",
    ".mjs": "javascript", ".jl": "julia", ".kt": "kotlin", ".lua": "lua", ".php": "php",
    ".ipynb": "python", ".py": "python", ".pyi": "python", ".r": "r", ".rb": "ruby", ".rs": "rust",
    ".scala": "scala", ".bash": "shell", ".sh": "shell", ".zsh": "shell", ".sql": "sql", ".svelte": "svelte",
    ".swift": "swift", ".tf": "terraform", ".ts": "typescript", ".tsx": "typescript", ".vue": "vue", ".zig": "zig",
}
