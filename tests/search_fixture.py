"""A labelled search fixture written for engramory's search tests and bench: notes of a made-up
company's engineering memory (English, Chinese, Japanese, error strings, file names), and
queries with the note each should find. The queries paraphrase; they are not copies of the
descriptions. Distractor notes share the vocabulary (services, tools, verbs) so that ranking,
not mere matching, decides.

`write(root, extra)` lays the store out on disk: every target, the distractors, and `extra`
more generated notes (the bench uses it to reach 1,000).
"""

from __future__ import annotations

import random
from pathlib import Path

# (slug, type, description, body, queries)
TARGETS: list[tuple[str, str, str, str, list[str]]] = [
    # --- English: how to work, project state, people, where things are ------------------------
    ("full-suite-before-done", "feedback", "Run the whole test suite, not one file, before saying a fix works",
     "Changes here break callers in other modules.", ["run all tests before claiming fixed"]),
    ("squash-merge-only", "feedback", "Squash merge pull requests; never rebase-merge",
     "The changelog tool reads one commit per PR.", ["how should I merge a PR"]),
    ("reply-in-french", "feedback", "Answer the user in French, code comments stay in English",
     "The user reads French faster.", ["which language to reply in"]),
    ("no-emoji-commits", "feedback", "Commit messages without emoji or gitmoji prefixes",
     "The release notes generator chokes on them.", ["emoji in commit messages"]),
    ("ask-before-migrations", "feedback", "Ask before writing a database migration",
     "Migrations need the DBA's review slot on Tuesdays.", ["can I add a schema migration myself"]),
    ("prefer-small-prs", "feedback", "Keep pull requests under 400 changed lines",
     "Reviewers skim big diffs and miss bugs.", ["maximum size of a pull request"]),
    ("pytest-not-unittest", "feedback", "Write new tests with pytest fixtures, not unittest classes",
     "The team moved off unittest in 2025.", ["test framework style for new tests"]),
    ("type-hints-required", "feedback", "Every new Python function gets type hints; mypy strict runs in CI",
     "CI fails on untyped defs.", ["do functions need annotations"]),
    ("billing-freeze", "project", "Billing API schema frozen from 2026-12-10 to 2027-01-05 for the audit",
     "Year-end audit needs a stable build.", ["when can billing schema change again"]),
    ("search-rewrite", "project", "Search service rewrite from Elasticsearch to Postgres full text, due 2027-02",
     "Elasticsearch licence costs tripled.", ["why are we leaving elasticsearch"]),
    ("mobile-sunset", "project", "The legacy mobile web app shuts down on 2027-03-31",
     "Traffic fell below 2 percent.", ["end of life date for the old mobile site"]),
    ("gdpr-export", "project", "GDPR data export endpoint must ship before the 2027-01-20 legal review",
     "Legal flagged the manual export process.", ["privacy export deadline"]),
    ("oncall-rotation", "project", "On-call moves from weekly to follow-the-sun rotation in January 2027",
     "Two new offices in Singapore and Berlin.", ["pager duty schedule change"]),
    ("kafka-upgrade", "project", "Kafka cluster upgrade to 3.8 blocked on the consumer lag dashboard",
     "We need lag visibility before the rolling restart.", ["what blocks the kafka version bump"]),
    ("user-backend-lead", "user", "The user is the backend lead for billing and new to the React frontend",
     "Explain frontend code paths in more detail.", ["who am I talking to, their role"]),
    ("user-prefers-terse", "user", "The user wants terse answers with code first, prose after",
     "Long preambles annoy them.", ["how long should answers be"]),
    ("user-timezone", "user", "The user works from Lisbon, UTC+0 in winter",
     "Schedule reminders in their morning.", ["what time zone is the user in"]),
    ("user-vim", "user", "The user edits in Neovim and dislikes IDE-specific instructions",
     "Give shell commands instead of menu clicks.", ["which editor does the user use"]),
    ("user-colourblind", "user", "The user is red-green colour blind; never rely on red/green alone in UI reviews",
     "Use shapes or labels too.", ["accessibility preference color vision"]),
    ("staging-dashboard", "reference", "Staging error dashboard: Grafana board staging-errors",
     "https://grafana.example.com/d/staging-errors shows errors by service, last 24 hours.",
     ["where do I see staging errors"]),
    ("prod-logs", "reference", "Production logs are in Loki, query by service label",
     "https://loki.example.com with {service=\"billing\"}.", ["how to read production logs"]),
    ("runbook-wiki", "reference", "Incident runbooks live in the Notion space Ops/Runbooks",
     "Each alert links its runbook page.", ["where are incident runbooks"]),
    ("design-tokens", "reference", "Design tokens come from the Figma library Brand 2026",
     "Export with the tokens plugin, never copy hex codes by hand.", ["where do colour tokens come from"]),
    ("api-spec", "reference", "OpenAPI spec for the public API is docs/openapi/public.yaml",
     "Generated clients are built from it nightly.", ["public API swagger file"]),
    ("ci-cache", "reference", "CI cache keys are defined in .github/actions/cache/action.yml",
     "Bump the version suffix to bust the cache.", ["how to invalidate the CI cache"]),
    ("perf-budget", "project", "Checkout page must load under 1.5 s on a mid-range phone (LCP budget)",
     "Marketing promised it in the Q1 plan.", ["largest contentful paint target checkout"]),
    ("feature-flags", "reference", "Feature flags are managed in Unleash, project web-main",
     "Flags older than 90 days get a cleanup ticket.", ["where do I toggle a feature flag"]),
    ("secrets-location", "reference", "The deploy token lives in the DEPLOY_TOKEN variable of the CI settings",
     "Never paste it into notes or chat.", ["where is the deployment credential kept"]),
    ("vpn-required", "reference", "Internal dashboards need the WireGuard VPN profile corp-eu",
     "Without it Grafana returns 403.", ["grafana forbidden from home"]),
    ("release-train", "project", "Releases go out every second Wednesday; cut-off is Monday 18:00 UTC",
     "Release manager rotates per train.", ["when is the next release cutoff"]),
    ("db-readonly-replica", "reference", "Analytics queries must use the read replica db-replica-2",
     "The primary is reserved for writes.", ["which database host for reporting queries"]),
    ("flaky-checkout-test", "feedback", "The checkout e2e test is flaky under load; rerun once before debugging",
     "It races the payment mock.", ["checkout end to end test keeps failing randomly"]),
    ("lint-before-push", "feedback", "Run ruff and mypy locally before pushing",
     "CI minutes are billed per run.", ["what to run before git push"]),
    ("docker-compose-profile", "reference", "Local stack starts with docker compose --profile dev up",
     "The default profile omits the mail catcher.", ["start the local development stack"]),
    ("translation-vendor", "reference", "Translations are ordered through Lokalise project web",
     "Strings freeze two days before a release.", ["who translates our strings"]),
    ("support-escalation", "reference", "Support escalations arrive in the #support-l2 Slack channel",
     "Tag the on-call engineer, not the whole team.", ["where do support tickets get escalated"]),
    ("pricing-experiment", "project", "Pricing page A/B test runs until 2027-01-15; do not change the page copy",
     "Copy changes would invalidate the experiment.", ["can I edit the pricing page text"]),
    ("no-force-push", "feedback", "Never force-push to shared branches; use a revert commit",
     "Force pushes lost a teammate's work in 2026.", ["fix a bad commit on main"]),
    ("commit-scope", "feedback", "Prefix commit subjects with the package name, e.g. billing: fix rounding",
     "The monorepo changelog groups by prefix.", ["commit message format convention"]),
    ("benchmark-machine", "reference", "Benchmarks run on the bare-metal box bench-01, not on laptops",
     "Laptop numbers vary by 30 percent.", ["where should performance measurements run"]),
    ("code-owners", "reference", "Code owners for each folder are listed in .github/CODEOWNERS",
     "Reviews auto-request from it.", ["who must review changes to a folder"]),
    ("rate-limits", "project", "Public API rate limit drops to 100 requests per minute on 2027-02-01",
     "Abuse from scrapers; partners get keys with higher limits.", ["api throttling change"]),
    ("dark-mode", "project", "Dark mode ships behind the flag theme-dark; QA sign-off pending",
     "Contrast issues on charts remain.", ["status of the night theme"]),
    ("storybook", "reference", "Component docs are in Storybook at https://storybook.example.com",
     "Each component has a usage page.", ["ui component gallery"]),
    ("sentry-project", "reference", "Frontend exceptions go to Sentry project web-frontend",
     "Source maps upload in the release job.", ["where are javascript exceptions reported"]),
    ("python-version", "project", "Services move to Python 3.12 by 2027-03; 3.9 support ends then",
     "Base images already ship 3.12.", ["minimum interpreter version plan"]),
    ("cost-alerts", "reference", "Cloud cost alerts are sent to finance-ops@example.com weekly",
     "Spikes over 20 percent page the platform team.", ["who receives cloud spend warnings"]),
    ("pairing-fridays", "feedback", "On Fridays the user pairs; keep suggestions small and explain each step",
     "They share their screen with juniors.", ["friday collaboration habit"]),
    ("tabs-vs-spaces", "feedback", "Go code uses gofmt tabs; YAML uses two spaces",
     "Editors differ; the linters enforce it.", ["indentation rules for yaml and go"]),
    ("cdn-purge", "reference", "Purge the CDN cache with scripts/cdn_purge.py --path",
     "Needs the CDN_API_KEY environment variable.", ["clear cached assets at the edge"]),
    # --- Chinese / Japanese -----------------------------------------------------------------------
    ("deploy-zh", "reference", "部署流程文档在内部维基的运维页面", "先在预发环境验证，再发布到生产环境。", ["部署流程"]),
    ("test-db-zh", "reference", "测试数据库每天凌晨三点重置", "不要在测试库里保存需要长期保留的数据。", ["测试数据库重置时间"]),
    ("review-zh", "feedback", "代码评审时先看测试再看实现", "测试说明了意图。", ["代码评审顺序"]),
    ("log-zh", "reference", "生产日志保存三十天，之后归档到对象存储", "查询旧日志需要申请权限。", ["日志保存多久"]),
    ("config-zh", "reference", "服务配置统一放在配置中心，不要写死在代码里", "配置中心地址见运维手册。", ["配置放在哪里"]),
    ("oncall-zh", "project", "春节期间值班表已排好，从2027-02-05到2027-02-12", "每天两人值班。", ["春节值班安排"]),
    ("perf-zh", "project", "首页加载时间目标是两秒以内", "移动端同样适用。", ["首页性能目标"]),
    ("user-zh", "user", "用户是数据工程师，熟悉SQL，不熟悉前端", "解释前端代码时要详细。", ["用户的背景"]),
    ("cache-zh", "feedback", "修改缓存逻辑前先和平台组确认", "缓存失效曾导致线上事故。", ["改缓存之前要做什么"]),
    ("monitor-zh", "reference", "监控告警统一发到飞书群平台值班", "紧急告警同时电话通知。", ["告警发到哪里"]),
    ("deploy-ja", "reference", "デプロイ手順は社内ウィキの運用ページにある", "まずステージングで確認してから本番へ。", ["デプロイ手順"]),
    ("test-ja", "feedback", "テストは必ずローカルで全部実行してからプッシュする", "CIの待ち時間が長いため。", ["プッシュ前にテスト"]),
    ("user-ja", "user", "ユーザーはフロントエンド担当でTypeScriptに詳しい", "バックエンドの説明は丁寧に。", ["ユーザーの担当"]),
    ("meeting-ja", "project", "定例会議は毎週火曜日の十時から", "議事録は共有フォルダに保存。", ["定例会議の曜日"]),
    ("backup-ja", "reference", "データベースのバックアップは毎晩二時に取得される", "保存期間は十四日。", ["バックアップの時間"]),
    ("i18n-ja", "feedback", "翻訳文字列はコードに直接書かない", "翻訳ファイルを使うこと。", ["翻訳文字列の扱い"]),
    ("mixed-zh-en", "reference", "Redis 集群的连接地址在配置中心的 cache 命名空间", "不要直连主节点。", ["Redis 连接地址"]),
    ("mixed-ja-en", "reference", "Kubernetes のネームスペースはチームごとに分ける", "命名規則は team-サービス名。", ["ネームスペース 命名"]),
    ("ko-note", "reference", "배포 전에 스테이징 환경에서 검증한다", "운영 배포는 화요일과 목요일.", ["배포 전 검증"]),
    ("search-zh", "reference", "搜索服务使用分词器处理中文查询", "新词需要加入自定义词典。", ["中文分词词典"]),
    # --- error strings ---------------------------------------------------------------------------
    ("pg-refused", "reference", "Local Postgres refuses connections until docker compose is up",
     "psql: error: connection to server at \"127.0.0.1\", port 5432 failed: Connection refused. Start the stack first.",
     ["connection to server at 127.0.0.1 port 5432 failed: Connection refused"]),
    ("econnrefused-redis", "reference", "Redis ECONNREFUSED in tests means the redis container is not running",
     "Error: connect ECONNREFUSED 127.0.0.1:6379 — run docker compose up redis.", ["connect ECONNREFUSED 127.0.0.1:6379"]),
    ("yaml-missing", "reference", "ModuleNotFoundError for yaml: install the test extras",
     "ModuleNotFoundError: No module named 'yaml' → pip install -e '.[test]'.", ["No module named 'yaml'"]),
    ("node-heap", "reference", "Webpack build runs out of memory; raise the Node heap",
     "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory. Set NODE_OPTIONS=--max-old-space-size=4096.",
     ["JavaScript heap out of memory"]),
    ("cors-error", "reference", "CORS errors on localhost come from the API gateway allow-list",
     "Access to fetch at 'https://api.example.com' has been blocked by CORS policy: add http://localhost:3000 to ALLOWED_ORIGINS.",
     ["blocked by CORS policy"]),
    ("ssl-verify", "reference", "SSL certificate verify failed behind the corporate proxy",
     "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] — set REQUESTS_CA_BUNDLE to the corp CA file.",
     ["CERTIFICATE_VERIFY_FAILED"]),
    ("git-lfs", "reference", "Git LFS pointer files instead of images mean LFS is not installed",
     "Encountered 12 file(s) that should have been pointers — run git lfs install && git lfs pull.",
     ["should have been pointers"]),
    ("oom-killed", "reference", "Pods OOMKilled after the 2026-11 release: memory limit raised to 1Gi",
     "kubectl describe pod shows Reason: OOMKilled, exit code 137.", ["exit code 137 OOMKilled"]),
    ("deadlock-detected", "reference", "Postgres deadlock detected during nightly batch",
     "ERROR: deadlock detected DETAIL: Process 4242 waits for ShareLock — the batch must lock rows in id order.",
     ["ERROR: deadlock detected"]),
    ("eaddrinuse", "reference", "Port 3000 already in use: an old dev server is still running",
     "Error: listen EADDRINUSE: address already in use :::3000 — kill it with lsof -i :3000.", ["EADDRINUSE address already in use"]),
    ("permission-denied-publickey", "reference", "Git push fails with publickey: add the SSH key to the agent",
     "git@github.com: Permission denied (publickey). fatal: Could not read from remote repository.",
     ["Permission denied (publickey)"]),
    ("segfault-numpy", "reference", "Segfault in numpy on the M-series build agents: pin numpy 1.26",
     "Fatal Python error: Segmentation fault in numpy/core/_multiarray_umath.", ["Fatal Python error: Segmentation fault"]),
    ("timeout-gateway", "reference", "504 Gateway Timeout on report export: the export is async now",
     "upstream request timeout after 60s; poll /exports/{id} instead.", ["504 Gateway Timeout export"]),
    ("keyerror-settings", "reference", "KeyError DATABASE_URL at startup means the .env file is missing",
     "KeyError: 'DATABASE_URL' raised in settings.py line 12; copy .env.example to .env.", ["KeyError: 'DATABASE_URL'"]),
    ("npm-eresolve", "reference", "npm ERESOLVE peer dependency conflict with react 19",
     "npm ERR! code ERESOLVE unable to resolve dependency tree — use --legacy-peer-deps until the charts lib updates.",
     ["ERESOLVE unable to resolve dependency tree"]),
    ("mypy-import", "reference", "mypy cannot find stubs for requests: install types-requests",
     "error: Library stubs not installed for \"requests\" [import-untyped].", ["Library stubs not installed for requests"]),
    ("docker-no-space", "reference", "Docker build fails with no space left on device: prune images",
     "failed to register layer: write /var/lib/docker: no space left on device — docker system prune -af.",
     ["no space left on device docker"]),
    ("tz-naive", "reference", "can't compare offset-naive and offset-aware datetimes in reports",
     "TypeError: can't compare offset-naive and offset-aware datetimes — use timezone-aware UTC everywhere.",
     ["offset-naive and offset-aware"]),
    ("too-many-open-files", "reference", "Too many open files on the ingest worker: raise ulimit",
     "OSError: [Errno 24] Too many open files — set LimitNOFILE=65536 in the unit file.", ["Errno 24 Too many open files"]),
    ("ts-2307", "reference", "TS2307 cannot find module after moving files: restart the TS server",
     "error TS2307: Cannot find module '@/components/Button' or its corresponding type declarations.",
     ["TS2307 Cannot find module"]),
    # --- file names ----------------------------------------------------------------------------------
    ("release-script", "reference", "Release builds are cut with scripts/release.sh from a clean tree",
     "It tags, builds and uploads; needs GPG signing set up.", ["scripts/release.sh"]),
    ("flaky-foo-test", "reference", "foo.test.ts:42 is flaky under load; rerun with --retry 2",
     "The timer mock races the fetch.", ["foo.test.ts"]),
    ("settings-py", "reference", "Django settings split: config/settings/base.py plus one file per environment",
     "Never edit production.py by hand on the server.", ["config/settings/base.py"]),
    ("makefile-targets", "reference", "Makefile target make check runs lint, types and unit tests",
     "make e2e needs the browser drivers.", ["Makefile check target"]),
    ("pyproject-extras", "reference", "pyproject.toml extras: test and lint; install both for local work",
     "pip install -e '.[test,lint]'.", ["pyproject.toml extras"]),
    ("nginx-conf", "reference", "nginx rewrite rules live in deploy/nginx/site.conf",
     "Reload with nginx -s reload after a change.", ["site.conf nginx"]),
    ("tsconfig-paths", "reference", "Path aliases are declared in tsconfig.base.json, not per package",
     "The @/ alias points at src/.", ["tsconfig.base.json"]),
    ("env-example", "reference", "Every new environment variable must be added to .env.example",
     "The setup script copies it for newcomers.", [".env.example"]),
    ("dockerfile-base", "reference", "Service images build from docker/base.Dockerfile",
     "Bump the base image digest there, not in each service.", ["base.Dockerfile"]),
    ("alembic-dir", "reference", "Database migrations are in migrations/versions, generated by alembic",
     "Name them with the ticket id.", ["migrations/versions alembic"]),
    ("github-workflow", "reference", "The main CI workflow is .github/workflows/ci.yml",
     "Jobs: lint, test, build, deploy-preview.", ["workflows/ci.yml"]),
    ("conftest-fixtures", "reference", "Shared pytest fixtures live in tests/conftest.py; do not duplicate them",
     "The db fixture rolls back after each test.", ["tests/conftest.py"]),
    ("package-lock", "feedback", "Commit package-lock.json with every dependency change",
     "CI uses npm ci and fails without it.", ["package-lock.json"]),
    ("readme-badges", "reference", "Status badges in README.md come from shields.io endpoints in docs/badges.json",
     "Update the JSON, not the README.", ["docs/badges.json"]),
    ("cron-schedule", "reference", "Scheduled jobs are defined in ops/cron/crontab.yaml",
     "Times are UTC.", ["crontab.yaml"]),
    ("i18n-files", "reference", "Translation files are locales/<lang>/messages.po",
     "Run make messages after adding strings.", ["messages.po"]),
    ("terraform-state", "reference", "Terraform state for prod is in the S3 bucket tf-state-prod, module infra/prod/main.tf",
     "Never run apply from a laptop.", ["infra/prod/main.tf"]),
    ("webpack-config", "reference", "Webpack config is webpack.config.js at the repo root; the dev server proxy is set there",
     "Proxy /api to localhost:8000.", ["webpack.config.js proxy"]),
    ("gitattributes", "reference", "Line endings are fixed by .gitattributes (eol=lf for scripts)",
     "Windows checkouts otherwise break the shell scripts.", [".gitattributes line endings"]),
    ("jest-setup", "reference", "Jest global setup is in jest.setup.ts; it mocks fetch",
     "Tests that need real fetch must unmock it.", ["jest.setup.ts"]),
]

# Queries that name no target verbatim but are reworded harder (extra labelled queries).
EXTRA_QUERIES: list[tuple[str, str]] = [
    ("full-suite-before-done", "whole suite not just one file"),
    ("billing-freeze", "audit freeze billing"),
    ("staging-dashboard", "grafana staging"),
    ("pg-refused", "port 5432 refused"),
    ("node-heap", "max-old-space-size"),
    ("flaky-foo-test", "retry flaky timer mock"),
    ("deploy-zh", "预发环境验证"),
    ("deploy-ja", "ステージングで確認"),
    ("secrets-location", "DEPLOY_TOKEN"),
    ("cdn-purge", "cdn_purge.py"),
]

SERVICES = ["billing", "auth", "search", "payments", "checkout", "ingest", "reports", "notifications", "gateway",
            "profile", "inventory", "shipping", "analytics", "mobile", "admin", "scheduler"]
TOOLS = ["docker", "kubernetes", "terraform", "grafana", "sentry", "postgres", "redis", "kafka", "nginx", "webpack",
         "pytest", "jest", "mypy", "ruff", "helm", "celery"]
VERBS = ["deploy", "restart", "migrate", "configure", "monitor", "debug", "profile", "rollback", "scale", "test",
         "upgrade", "document", "review", "release", "benchmark", "audit"]
THINGS = ["timeouts", "retries", "dashboards", "alerts", "schemas", "queues", "caches", "tokens", "certificates",
          "workers", "cron jobs", "feature flags", "indexes", "replicas", "logs", "budgets"]
ZH = ["服务", "部署", "监控", "数据库", "缓存", "日志", "配置", "告警", "测试", "发布", "性能", "接口"]
JA = ["サービス", "デプロイ", "監視", "データベース", "キャッシュ", "ログ", "設定", "テスト", "リリース"]
TYPES = ["user", "feedback", "project", "reference"]


def distractor(i: int, rng: random.Random) -> tuple[str, str, str, str]:
    """One generated note: (slug, type, description, body), in the fixture's vocabulary."""
    s, t, v, th = rng.choice(SERVICES), rng.choice(TOOLS), rng.choice(VERBS), rng.choice(THINGS)
    type_ = TYPES[i % 4]
    kind = i % 10
    if kind == 7:
        desc = "%s的%s%s说明 %d" % (s, rng.choice(ZH), rng.choice(ZH), i)
        body = "%s%s需要%s，联系%s组。编号%d。" % (rng.choice(ZH), rng.choice(ZH), rng.choice(ZH), s, i)
    elif kind == 8:
        desc = "%sの%s%sについて %d" % (s, rng.choice(JA), rng.choice(JA), i)
        body = "%sは%sで%sする。番号%d。" % (rng.choice(JA), t, rng.choice(JA), i)
    else:
        desc = "How we %s %s %s with %s (%d)" % (v, s, th, t, i)
        body = ("Note %d. When you %s the %s %s, check %s first; see services/%s/%s_%s.py for details. "
                "Owner: the %s team." % (i, v, s, th, t, s, t, v, rng.choice(SERVICES)))
    if type_ in ("feedback", "project"):
        body += "\n\n**Why:** it bit us before.\n**How to apply:** follow it on the %s service." % s
    return "gen-%04d-%s-%s" % (i, s, v), type_, desc, body


def note_text(slug: str, type_: str, desc: str, body: str) -> str:
    from engramory.curate.notes import scalar

    if type_ in ("feedback", "project") and "**Why:**" not in body:
        body += "\n\n**Why:** recorded for the fixture.\n**How to apply:** as the description says."
    return "---\nname: %s\ndescription: %s\ntype: %s\ncreated: 2026-11-01\nupdated: 2026-11-02\n---\n%s\n" % (
        slug, scalar("description", desc), type_, body)


SECTIONS = (("english", 0, 50), ("cjk", 50, 70), ("error", 70, 90), ("file", 90, 110))


def category(slug: str) -> str:
    """Which section of TARGETS a note was written in: english, cjk, error or file."""
    k = next(i for i, t in enumerate(TARGETS) if t[0] == slug)
    return next(name for name, a, b in SECTIONS if a <= k < b)


def queries() -> list[tuple[str, str]]:
    """(query, expected note path) pairs."""
    out = [(q, slug + ".md") for slug, _, _, _, qs in TARGETS for q in qs]
    out += [(q, slug + ".md") for slug, q in EXTRA_QUERIES]
    return out


def write(root: Path, distractors: int = 220, archived: int = 10) -> int:
    """Write the store; returns the number of notes. Some targets go to archive/ so that search
    must find archived notes too (`archived` of them, every tenth target)."""
    rng = random.Random(12)
    root.mkdir(parents=True, exist_ok=True)
    (root / "archive").mkdir(exist_ok=True)
    index = ["# Memory Index", ""]
    count = 0
    for k, (slug, type_, desc, body, _) in enumerate(TARGETS):
        in_archive = k % 10 == 5 and k // 10 < archived
        folder = root / "archive" if in_archive else root
        (folder / (slug + ".md")).write_text(note_text(slug, type_, desc, body), encoding="utf-8")
        if not in_archive:
            index.append("- [%s](%s.md)" % (slug, slug))
        count += 1
    for i in range(distractors):
        slug, type_, desc, body = distractor(i, rng)
        (root / (slug + ".md")).write_text(note_text(slug, type_, desc, body), encoding="utf-8")
        count += 1
    (root / "MEMORY.md").write_text("\n".join(index[:150]) + "\n", encoding="utf-8")
    return count


def archived_targets(archived: int = 10) -> set[str]:
    return {"archive/" + slug + ".md" for k, (slug, *_rest) in enumerate(TARGETS) if k % 10 == 5 and k // 10 < archived}
