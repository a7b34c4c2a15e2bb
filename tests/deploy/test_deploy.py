"""The deployment files, checked without Docker or Kubernetes: the Dockerfile installs the way the
Makefile does (CI runs the Makefile's steps on a fresh venv), compose parses, Helm itself (Helm v4's
engine from helm-python-sdk, no binary) renders the chart in strict mode and lints it clean, the
rendered objects pass the Kubernetes JSON schemas (kubernetes-validate, strict), probes point at
routes bot/web/ops.py serves, and every FOOTNOTE_ variable they set is a real setting."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import get_args

import helm_python as helm
import kubernetes_validate
import pytest
import yaml
from helm_python import _native
from pydantic import BaseModel, TypeAdapter

from bot.settings import ServerSettings, Settings
from bot.web.links import link_secret
from bot.web.ops import OPS_ROUTES
from ingest.errors import ConfigError
from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "helm" / "footnote"
K8S_VERSIONS = (
    "1.25",
    "1.37",
)  # the oldest with every API the chart uses, the newest schemas shipped
ALL_ON = {  # every optional branch of the chart taken
    "bot": {"autoscaling": {"enabled": True}},
    "directory": "users:\n  ann: {name: Ann, email: ann@example.com, groups: [hr]}\n",
    "extraEnv": {"FOOTNOTE_LLM__PROVIDER": "openai", "FOOTNOTE_LLM__MODEL": "gpt-4o"},
    "telemetry": {"otlpEndpoint": "http://otel:4318", "pushgatewayUrl": "http://pushgateway:9091"},
    "server": {"oidc": {"issuer": "https://slack.com", "clientId": "123.456"}},
    "secrets": {
        "values": {
            "FOOTNOTE_SERVER__LINK_SECRET": "9c4e1b7d2a6f8e30" * 4,
            "FOOTNOTE_SERVER__OIDC__CLIENT_SECRET": "oidc-client-secret",
            "FOOTNOTE_SLACK__BOT_TOKEN": "xoxb-1",
            "FOOTNOTE_SLACK__SIGNING_SECRET": "abc",
            "FOOTNOTE_LLM__API_KEY": "sk-1",
        }
    },
    "ingest": {
        "volume": {"persistentVolumeClaim": {"claimName": "exports"}},
        "jobs": [
            {"name": "hr", "path": "/srv/docs/hr", "acl": "hr,managers", "schedule": "0 * * * *"},
            {"name": "eng", "path": "/srv/docs/eng", "acl": "", "schedule": "30 * * * *"},
        ],
    },
}
SHARDED = {  # the sync as an Indexed Job of three pods
    "sync": {"schedule": "*/30 * * * *", "workers": 3},
    "secrets": {"values": {"FOOTNOTE_DATABASE__URL": "postgresql://footnote:pw@pg:5432/footnote"}},
}
VALUE_SETS = {
    "defaults": {},
    "sync-sharded": SHARDED,
    "all-on": ALL_ON,
    "existing-secret": {"secrets": {"existingSecret": "footnote-keys"}},
}


def setting_names(model: type[BaseModel] = Settings, prefix: str = "FOOTNOTE_") -> set[str]:
    """Every environment variable Settings reads: sections nest with ``__``."""
    names = set()
    for name, field in model.model_fields.items():
        section = [
            t
            for t in (get_args(field.annotation) or (field.annotation,))
            if isinstance(t, type) and issubclass(t, BaseModel)
        ]
        if section:
            names |= setting_names(section[0], f"{prefix}{name.upper()}__")
        else:
            names.add(f"{prefix}{name.upper()}")
    return names


SETTINGS = setting_names()


def settings_from(env: dict[str, str], monkeypatch) -> Settings:
    """What the product would build from these variables (and nothing else from this machine)."""
    for key in [k for k in __import__("os").environ if k.startswith("FOOTNOTE_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    return Settings()


# ── Dockerfile ────────────────────────────────────────────────────────────────────────────────


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    out = []
    defaults: dict[str, str] = {}  # an ARG's default stands in for its ${NAME} from there on
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            rest = re.sub(r"\$\{(\w+)\}", lambda m: defaults.get(m.group(1), m.group(0)), rest)
            if word.upper() == "ARG" and "=" in rest:
                name, _, value = rest.strip().partition("=")
                defaults[name] = value
            out.append((word.upper(), rest.strip()))
    return out


# How the Makefile and the Dockerfile turn LOCK (one lock or several) into pip's `-r` options.
MAKE_LOCKS = "$(addprefix -r ,$(LOCK))"
DOCKER_LOCKS = re.compile(r"\$\(printf -- '-r %s ' (\S+)\)")


def pip_commands(commands: list[str]) -> list[list[str]]:
    return [
        shlex.split(c)[shlex.split(c).index("pip") :]
        for c in commands
        if " pip install " in f" {c} "
    ]


def test_several_locks_become_one_r_option_each_in_the_image_and_the_makefile():
    """`--build-arg LOCK="a.lock b.lock"` (an LLM client and PostgreSQL) installs both: the shell
    the image runs expands the Dockerfile's words, make expands the Makefile's."""
    text = (DEPLOY / "Dockerfile").read_text()
    words = re.search(r"\$\(printf -- '-r %s ' \$\{LOCK\}\)", text)
    assert words and DOCKER_LOCKS.search(re.sub(r"\\\n", " ", text).replace("${LOCK}", "x.lock"))
    locks = "requirements-openai.lock requirements-postgres.lock"
    expanded = subprocess.run(
        ["sh", "-c", f'LOCK="{locks}"; echo {words.group(0)}'],
        capture_output=True,
        encoding="utf-8",
        check=True,
    ).stdout.split()
    assert expanded == ["-r", "requirements-openai.lock", "-r", "requirements-postgres.lock"]
    assert MAKE_LOCKS in (ROOT / "Makefile").read_text()
    made = subprocess.run(
        ["make", "-s", "-f", "-", f"LOCK={locks}"],
        input=f"all:\n\t@echo {MAKE_LOCKS}\n",
        capture_output=True,
        encoding="utf-8",
        check=True,
    ).stdout.split()
    assert made == expanded
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text()
    for lock in sorted(ROOT.glob("requirements-*.lock")):
        wanted = lock.name not in ("requirements-dev.lock", "requirements-llm.lock")
        assert (f"!{lock.name}" in ignored) == wanted, lock.name  # in the build context or not


def test_dockerfile_installs_as_the_makefile_does_with_the_runtime_lock_only():
    """The image is the Makefile's install with LOCK=requirements.lock: no test or lint tools."""
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^LOCK \?= requirements-dev\.lock$", make, re.M)  # what `make install` takes
    recipe = re.search(r"^\$\(VENV\)/\.installed:.*\n((?:\t.*\n)+)", make, re.M).group(1)
    make_cmds = [
        line.strip().replace("$(PY)", "python").replace(MAKE_LOCKS, "-r requirements.lock")
        for line in recipe.splitlines()
    ]
    docker_cmds = [
        DOCKER_LOCKS.sub(r"-r \1", c.strip())
        for word, args in dockerfile()
        if word == "RUN"
        for c in args.split("&&")
    ]
    assert pip_commands(docker_cmds) == pip_commands(make_cmds)
    lock_install, package_install = pip_commands(docker_cmds)  # the lock, then the package
    assert "--require-hashes" in lock_install
    assert lock_install[lock_install.index("-r") + 1] == "requirements.lock"
    assert package_install[-2:] == ["-e", "."]
    copied = " ".join(args for w, args in dockerfile() if w == "COPY")
    assert "requirements-dev.lock" not in copied
    assert "requirements-dev.lock" not in (DEPLOY / "Dockerfile.dockerignore").read_text()


def test_dockerfile_runs_as_non_root_offline_and_serves_on_the_settings_port():
    steps = dockerfile()
    words = [w for w, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    user = [args for w, args in steps if w == "USER"][-1]
    assert user.split(":")[0] not in ("root", "0")
    last_run = max(i for i, w in enumerate(words) if w == "RUN")
    assert words.index("USER") > last_run  # nothing runs as root after it
    env = " ".join(args for w, args in steps if w == "ENV")
    assert "HF_HUB_OFFLINE=1" in env
    # the settings default is loopback; in a container the published port must reach the server
    assert "FOOTNOTE_SERVER__HOST=0.0.0.0" in env.split() and ServerSettings().host == "127.0.0.1"
    assert [args for w, args in steps if w == "EXPOSE"] == [str(ServerSettings().port)]
    health = next(args for w, args in steps if w == "HEALTHCHECK")
    assert "/healthz" in health and "/healthz" in OPS_ROUTES
    assert next(args for w, args in steps if w == "CMD") == '["footnote", "serve"]'
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["footnote"] == "bot.entry:main"
    from bot.cli import COMMANDS

    assert {"serve", "ingest"} <= set(COMMANDS)  # what the image, compose and the chart run
    copied = [args.split()[0] for w, args in steps if w == "COPY"]
    for path in copied:
        assert any(ROOT.glob(path)), path
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text()
    for path in (p for p in copied if "*" not in p):  # the locks' glob: the test above
        assert f"!{path}" in ignore or f"!{path}/**" in ignore, (
            f"{path} is copied but excluded from the context"
        )


def test_the_image_uid_is_the_one_the_chart_runs_as(rendered):
    uid = [args for w, args in dockerfile() if w == "USER"][-1].split(":")[0]
    specs = [spec for spec in map(pod_spec, rendered) if spec is not None]
    assert specs
    for spec in specs:
        assert (
            str(spec["securityContext"]["runAsUser"]) == uid
            and spec["securityContext"]["runAsNonRoot"]
        )


# ── compose and .env.example ─────────────────────────────────────────────────────────────────


def test_compose_brings_up_qdrant_redis_an_ingest_job_and_the_bot(monkeypatch):
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"qdrant", "redis", "ingest", "bot"}
    assert services["qdrant"]["image"].startswith("qdrant/qdrant:")
    assert services["redis"]["image"].startswith("redis:")
    for name in ("ingest", "bot"):
        s = services[name]
        assert (DEPLOY / s["build"]["context"] / s["build"]["dockerfile"]).resolve() == (
            DEPLOY / "Dockerfile"
        ).resolve()
        assert s["env_file"] == [{"path": ".env", "required": False}]
        assert set(s["environment"]) <= SETTINGS, set(s["environment"]) - SETTINGS
        settings = settings_from(s["environment"], monkeypatch)
        assert settings.qdrant.url == "http://qdrant:6333" and settings.redis.url.startswith(
            "redis://redis:"
        )
    assert services["ingest"]["command"][:2] == ["footnote", "ingest"]
    assert (ROOT / services["ingest"]["command"][2]).is_dir()
    assert services["ingest"]["restart"] == "no"
    bot = services["bot"]
    assert bot["command"] == ["footnote", "serve"]
    assert bot["depends_on"]["ingest"] == {"condition": "service_completed_successfully"}
    assert (
        bot["depends_on"]["redis"]["condition"]
        == bot["depends_on"]["qdrant"]["condition"]
        == "service_healthy"
    )
    port = int(bot["environment"]["FOOTNOTE_SERVER__PORT"])
    assert f"{port}:{port}" in bot["ports"]
    assert settings_from(bot["environment"], monkeypatch).server.host == "0.0.0.0"


def env_example() -> list[tuple[str, str | None, bool]]:
    """(variable, the comment line above it, commented out?) for every variable line."""
    lines = (DEPLOY / ".env.example").read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"^(#\s*)?(FOOTNOTE_[A-Z0-9_]+)=", line)
        if m:
            above = lines[i - 1] if i else ""
            is_comment = above.startswith("#") and not re.match(r"^#\s*FOOTNOTE_", above)
            out.append((m.group(2), above if is_comment else None, bool(m.group(1))))
    return out


def test_env_example_lists_every_setting_once_each_with_a_comment():
    entries = env_example()
    names = [name for name, _, _ in entries]
    assert len(names) == len(set(names)), "a variable is listed twice"
    assert set(names) == SETTINGS, {
        "missing": SETTINGS - set(names),
        "not settings": set(names) - SETTINGS,
    }
    assert not [name for name, comment, _ in entries if not comment], (
        "every variable needs a comment above it"
    )


# Lines that show a deployment's value rather than the default (the comment says so).
ENV_EXAMPLES_NOT_DEFAULTS = {
    "FOOTNOTE_DIRECTORY_FILE",
    "FOOTNOTE_QDRANT__URL",
    "FOOTNOTE_DATABASE__URL",
    "FOOTNOTE_CONFLUENCE__EMAIL",
    "FOOTNOTE_GDRIVE__KEY_FILE",
    "FOOTNOTE_GDRIVE__SUBJECT",
    "FOOTNOTE_REDIS__URL",
    "FOOTNOTE_SERVER__PUBLIC_URL",
    "FOOTNOTE_SERVER__LINK_SECRET",
    "FOOTNOTE_TELEMETRY__OTLP_ENDPOINT",
    "FOOTNOTE_TELEMETRY__PUSHGATEWAY_URL",
}


def setting_field(name: str):
    """The pydantic field an environment variable sets."""
    model: type[BaseModel] = Settings
    parts = name.removeprefix("FOOTNOTE_").lower().split("__")
    for part in parts[:-1]:
        annotation = model.model_fields[part].annotation
        model = next(
            t
            for t in (get_args(annotation) or (annotation,))
            if isinstance(t, type) and issubclass(t, BaseModel)
        )
    return model.model_fields[parts[-1]]


def test_env_example_shows_the_real_defaults():
    wrong = {}
    for line in (DEPLOY / ".env.example").read_text().splitlines():
        m = re.match(r"^# (FOOTNOTE_[A-Z0-9_]+)=(.+)$", line)
        if not m or m.group(1) in ENV_EXAMPLES_NOT_DEFAULTS:
            continue
        field = setting_field(m.group(1))
        raw = m.group(2)
        value = json.loads(raw) if raw[:1] in "[{" else raw
        shown = TypeAdapter(field.annotation).validate_python(value)
        default = field.get_default(call_default_factory=True)
        if shown != default:
            wrong[m.group(1)] = (raw, default)
    assert not wrong, wrong


def test_env_example_as_shipped_parses_and_leaves_optional_sections_off(monkeypatch):
    env = {}
    for line in (DEPLOY / ".env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    settings = settings_from(env, monkeypatch)
    assert (
        settings.slack is None
        and settings.teams is None
        and settings.llm is None
        and settings.cohere is None
    )
    # the shipped value is a placeholder: `footnote serve` refuses it until it is replaced
    assert settings.server.link_secret is not None
    with pytest.raises(ConfigError, match="openssl rand -hex 32"):
        link_secret(settings, generate=False)


# ── Helm ─────────────────────────────────────────────────────────────────────────────────────

RELEASE = "footnote"
# The one finding `helm lint` has about this chart: an icon needs a hosted image URL, which a
# chart installed from a checkout has nowhere to point at.
LINT_ICON_ONLY = [{"severity": 1, "path": "Chart.yaml", "error": "icon is recommended"}]


def render_chart(values: dict | None = None, chart_dir: Path = CHART) -> list[dict]:
    """Every object ``helm template --strict`` makes from ``values.yaml`` plus ``values``.

    Strict: a template that reads a key values.yaml lacks (a typo) fails instead of printing
    nothing. helm-python-sdk 0.2.2's ``Chart.render`` has no ``strict`` keyword, but the engine
    it wraps takes the option, so the call goes one level down (the version is pinned for it)."""
    options = {"name": RELEASE, "strict": True}
    with helm.Chart.load(chart_dir) as chart:
        manifests = json.loads(
            _native.call_string(
                "helm_render", chart._raw(), json.dumps(values or {}), json.dumps(options)
            )
        )
    return [
        doc
        for name, text in sorted(manifests.items())
        if not name.endswith("NOTES.txt")  # printed to the installer, never applied
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def pod_spec(obj: dict) -> dict | None:
    if obj["kind"] == "Deployment":
        return obj["spec"]["template"]["spec"]
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return None


@pytest.fixture(params=list(VALUE_SETS), scope="module")
def rendered(request) -> list[dict]:
    return render_chart(VALUE_SETS[request.param])


def by_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_rendered_object_passes_the_kubernetes_schema(rendered, version):
    assert rendered
    for obj in rendered:
        kubernetes_validate.validate(obj, version, strict=True)


def test_bot_deployment_replicas_probes_and_resources(rendered):
    (deploy,) = by_kind(rendered, "Deployment")
    hpa = by_kind(rendered, "HorizontalPodAutoscaler")
    if hpa:
        assert "replicas" not in deploy["spec"] and hpa[0]["spec"]["minReplicas"] >= 2
        assert hpa[0]["spec"]["scaleTargetRef"]["name"] == deploy["metadata"]["name"]
    else:
        assert deploy["spec"]["replicas"] >= 2
    (container,) = deploy["spec"]["template"]["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] in OPS_ROUTES and get["port"] in ports
    assert set(container["resources"]["requests"]) == {"cpu", "memory"}
    annotations = deploy["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/path"] in OPS_ROUTES
    assert int(annotations["prometheus.io/port"]) == ports["http"]


def test_pdb_and_service_select_the_bot_pods(rendered):
    (deploy,) = by_kind(rendered, "Deployment")
    labels = deploy["spec"]["template"]["metadata"]["labels"]
    assert deploy["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (pdb,) = by_kind(rendered, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == deploy["spec"]["selector"]["matchLabels"]
    assert pdb["spec"]["minAvailable"] < deploy["spec"].get("replicas", 2)
    (service,) = by_kind(rendered, "Service")
    assert service["spec"]["selector"].items() <= labels.items()
    (container,) = deploy["spec"]["template"]["spec"]["containers"]
    assert service["spec"]["ports"][0]["targetPort"] in {p["name"] for p in container["ports"]}


def test_every_env_var_the_chart_sets_is_a_setting_and_parses(rendered, monkeypatch):
    maps = {
        (o["kind"], o["metadata"]["name"]): o.get("data") or o.get("stringData") or {}
        for o in rendered
        if o["kind"] in ("ConfigMap", "Secret")
    }
    env: dict[str, str] = {}
    for obj in rendered:
        spec = pod_spec(obj)
        if spec is None:
            continue
        for container in spec["containers"]:
            for source in container.get("envFrom", []):
                kind, ref = (
                    ("ConfigMap", source["configMapRef"])
                    if "configMapRef" in source
                    else ("Secret", source["secretRef"])
                )
                if (kind, ref["name"]) in maps:
                    env |= maps[(kind, ref["name"])]
                else:
                    assert ref["name"] == "footnote-keys"  # the admin's own Secret
            env |= {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
            # the one variable read from the pod itself: Kubernetes' shard number, not a setting
            assert {e["name"] for e in container.get("env", []) if "value" not in e} <= {
                "JOB_COMPLETION_INDEX"
            }
    assert set(env) <= SETTINGS, set(env) - SETTINGS
    settings = settings_from(env, monkeypatch)
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert settings.qdrant.shard_number == values["qdrant"]["shardNumber"]
    assert settings.qdrant.replication_factor == values["qdrant"]["replicationFactor"]
    assert (
        settings.qdrant.url == values["qdrant"]["url"]
        and settings.redis.url == values["redis"]["url"]
    )
    assert settings.server.host == "0.0.0.0"  # the probes and the Service reach the pod's IP
    if env.get("FOOTNOTE_SERVER__OIDC__ISSUER"):
        assert settings.server.oidc is not None and settings.server.oidc.client_id == "123.456"
    elif "FOOTNOTE_SERVER__OIDC__CLIENT_SECRET" not in env:
        assert settings.server.oidc is None


def test_secrets_hold_only_what_was_given(rendered):
    for secret in by_kind(rendered, "Secret"):
        data = secret.get("stringData") or {}
        assert all(data.values()), "an empty value would switch an optional section on"
        assert set(data) <= SETTINGS


def test_ingest_cronjobs_one_per_source_never_overlapping(rendered):
    jobs = [
        j
        for j in by_kind(rendered, "CronJob")
        if j["metadata"]["labels"]["app.kubernetes.io/component"] == "ingest"
    ]
    assert jobs
    for job in jobs:
        assert job["spec"]["concurrencyPolicy"] == "Forbid"
        (container,) = pod_spec(job)["containers"]
        assert container["command"][:2] == ["footnote", "ingest"]


def sync_job(objects: list[dict]) -> dict:
    (job,) = [o for o in by_kind(objects, "CronJob") if o["metadata"]["name"].endswith("-sync")]
    return job


def test_the_sync_runs_as_an_indexed_job_each_pod_a_shard():
    job = sync_job(render_chart(SHARDED))
    assert job["spec"]["concurrencyPolicy"] == "Forbid"  # a run never overlaps the next
    spec = job["spec"]["jobTemplate"]["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == 3
    (container,) = pod_spec(job)["containers"]
    assert container["command"] == ["footnote", "sync", "--shard", "$(JOB_COMPLETION_INDEX)/3"]
    (index,) = container["env"]
    assert index["name"] == "JOB_COMPLETION_INDEX"
    assert index["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    )


def test_one_sync_worker_is_a_plain_job_and_needs_no_qdrant_server():
    job = sync_job(render_chart({**SHARDED, "sync": {"workers": 1, "schedule": "0 * * * *"}}))
    spec = job["spec"]["jobTemplate"]["spec"]
    assert "completionMode" not in spec and "completions" not in spec
    (container,) = pod_spec(job)["containers"]
    assert container["command"] == ["footnote", "sync"] and "env" not in container
    alone = render_chart(
        {**SHARDED, "sync": {"workers": 1, "schedule": "0 * * * *"}, "qdrant": {"url": ""}}
    )
    assert sync_job(alone)
    assert not [o for o in render_chart({}) if o["metadata"]["name"].endswith("-sync")]


def test_several_sync_workers_without_a_qdrant_server_fail_rendering():
    with pytest.raises(helm.HelmRenderError, match=r"needs a Qdrant server: set qdrant\.url"):
        render_chart({**SHARDED, "qdrant": {"url": ""}})


def test_a_sync_without_a_database_url_fails_rendering():
    with pytest.raises(helm.HelmRenderError, match="FOOTNOTE_DATABASE__URL"):
        render_chart({"sync": {"schedule": "0 * * * *"}})
    assert sync_job(  # an admin's own Secret is trusted to hold it
        render_chart({"sync": {"schedule": "0 * * * *"}, "secrets": {"existingSecret": "keys"}})
    )


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_helm_lint_finds_nothing_but_the_missing_icon(name):
    report = helm.lint(CHART, VALUE_SETS[name], strict=True)
    assert report["total_charts_linted"] == 1
    assert report["messages"] == LINT_ICON_ONLY and report["errors"] == []


def test_secret_values_with_quotes_survive_rendering():
    tricky = 'a "quoted" \\ value: {x}\nsecond line ünï'
    objects = render_chart(
        {
            "secrets": {"values": {"FOOTNOTE_LLM__API_KEY": tricky}},
            "extraEnv": {"FOOTNOTE_LLM__MODEL": tricky},
        }
    )
    (secret,) = by_kind(objects, "Secret")
    assert secret["stringData"] == {"FOOTNOTE_LLM__API_KEY": tricky}
    (config,) = by_kind(objects, "ConfigMap")
    assert config["data"]["FOOTNOTE_LLM__MODEL"] == tricky


def broken_chart(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the chart with one edit in the Service template."""
    copy = shutil.copytree(CHART, tmp_path / "footnote")
    template = copy / "templates" / "service.yaml"
    assert old in template.read_text()
    template.write_text(template.read_text().replace(old, new))
    return copy


def test_a_value_the_templates_read_but_values_yaml_lacks_fails_rendering(tmp_path):
    chart = broken_chart(tmp_path, ".Values.service.type", ".Values.service.tpye")
    with pytest.raises(helm.HelmRenderError, match='map has no entry for key "tpye"'):
        render_chart(chart_dir=chart)


@pytest.mark.parametrize(
    "old, new, error",
    [
        ("{{ .Values.service.type }}", "{{ if .Values.service.type }}", "unexpected EOF"),
        ("{{ .Values.service.type }}", "{{ .Values.service.type | nosuch }}", "not defined"),
        ("  type: {{", "    type: {{", "unable to parse YAML"),
    ],
)
def test_a_broken_template_fails_rendering_and_lint(tmp_path, old, new, error):
    chart = broken_chart(tmp_path, old, new)
    with pytest.raises((helm.HelmRenderError, yaml.YAMLError)):
        render_chart(chart_dir=chart)
    report = helm.lint(chart, strict=True)
    assert report["errors"] and error in report["errors"][0]
