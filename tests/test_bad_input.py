"""Every bad input raises a ValueError naming the argument, the value and what is allowed; on the
command line, every bad option value is one line with exit status 2 before anything runs."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sltcheck.cli as cli
from sltcheck.assumptions import require, violations
from sltcheck.cli import build_parser
from sltcheck.cli.options import Integer, Validator, validator_of
from sltcheck.model import reference
from sltcheck.model.weights import FCWeights, MHAMasks, MHAWeights
from sltcheck.numerics.precision import to_mp
from sltcheck.numerics.verdict import decide

RNG = np.random.default_rng(0)
W = MHAWeights(*(RNG.normal(size=s) for s in [(2, 3, 4), (2, 3, 4), (2, 3, 5), (2, 5, 3)]))
X = RNG.normal(size=(4, 3))
CAUSAL = np.tril(np.ones((4, 4)))


def nan_at(array, index):
    array = np.array(array, dtype=float)
    array[index] = np.nan
    return array


def inf_at(array, index):
    array = np.array(array, dtype=float)
    array[index] = np.inf
    return array


def zero_row(mask, row):
    mask = np.array(mask)
    mask[row] = 0
    return mask


# (case, callable, fragment the message must contain)
CASES = [
    ("X wrong width", lambda: reference.mha(RNG.normal(size=(4, 2)), CAUSAL, W), "X must have 3 features"),
    ("X wrong rank", lambda: reference.mha(RNG.normal(size=(4,)), CAUSAL, W), "X must have 2 dimensions"),
    ("X empty", lambda: reference.mha(np.zeros((0, 3)), np.zeros((0, 0)), W), "T >= 1"),
    ("X with NaN", lambda: reference.mha(nan_at(X, (1, 2)), CAUSAL, W), "X must have finite entries"),
    ("X with inf", lambda: reference.mha(inf_at(X, (0, 0)), CAUSAL, W), "X must have finite entries"),
    ("mask wrong shape", lambda: reference.mha(X, np.ones((3, 4)), W), "mask must have shape (4, 4)"),
    ("mask row of zeros", lambda: reference.mha(X, zero_row(CAUSAL, 2), W), "mask row 2 attends to no token"),
    ("mask not binary", lambda: reference.mha(X, CAUSAL * 0.5, W), "mask must be binary"),
    ("softmax mask row of zeros", lambda: reference.masked_softmax(np.zeros((2, 3)), np.array([[1, 0, 0], [0, 0, 0]])),
     "mask row 1 attends to no token"),
    ("weights with NaN", lambda: MHAWeights(nan_at(W.W_Q, (0, 0, 0)), W.W_K, W.W_V, W.W_O), "W_Q must have finite"),
    ("weights shape mismatch", lambda: MHAWeights(W.W_Q, W.W_K[:, :, :3], W.W_V, W.W_O), "W_K must have shape"),
    ("W_O shape mismatch", lambda: MHAWeights(W.W_Q, W.W_K, W.W_V, W.W_O[:, :4]), "W_O must have shape"),
    ("non-binary pruning mask", lambda: MHAMasks(*(np.full(w.shape, 2) for w in W.tensors())), "M_Q must be binary"),
    ("pruning mask wrong shape", lambda: W.pruned(MHAMasks(*(np.ones((1, 1, 1)) for _ in range(4)))),
     "masks.M_Q must have the weight's shape"),
    ("FC layers do not chain", lambda: FCWeights((np.ones((4, 3)), np.ones((2, 5)))), "layers[1] must have 4 columns"),
    ("FC no layers", lambda: FCWeights(()), "at least one weight matrix"),
    ("precision zero", lambda: reference.mha(X, CAUSAL, W, dps=0), "positive integer"),
    ("precision negative", lambda: to_mp(X, -5), "positive integer"),
    ("precision not an int", lambda: reference.mha(X, CAUSAL, W, dps=2.5), "positive integer"),
    ("verdict precision", lambda: decide(1, 2, dps=0), "positive integer"),
    ("unknown statement", lambda: violations("lemma99", {}), "statement must be one of"),
    ("unknown assumption", lambda: violations("lemma8", {}, skip=["nonsense"]), "skip must name assumptions"),
    ("violated assumption", lambda: require("lemma8", {"eps_max": -1.0}), "eps_max = -1"),
]


@pytest.mark.parametrize(("call", "fragment"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_a_clear_value_error(call, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        call()


# --- the command line: every option of every command, found by walking the parsers --------------------------
#
# Each command's parser is discovered from the parsers themselves (a new command or option is covered
# without a row here) and each value-taking option is fed a table of hostile values. What an option must
# refuse follows from the domain its validator declares (sltcheck.cli.options: kind, bounds, names), never
# from a row per option: a value outside the domain must end in exit status 2 and one line
# "sltcheck: error: --OPTION: ...", with no traceback and no file created; a value inside it must reach the
# command (whose handler is replaced here by a stub, so nothing runs).


HOSTILE = {
    "empty": "", "blank": " ", "negative": "-1", "zero": "0", "fraction": "1.5", "nan": "nan", "inf": "inf",
    "-inf": "-inf", "huge": "1e400", "huge integer": "9" * 40, "unknown name": "nosuch",
    "missing path": "/nonexistent/sltcheck-missing/x", "long name": "x" * 300, "list with a gap": "1,,2",
}


def _commands() -> dict[str, argparse.ArgumentParser]:
    """'repro fig8' -> its parser, for every command (its lazily added arguments built) whose extras
    are installed (tests/test_extras.py and test_reliability.py run the others without them)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                parser.format_help()  # builds a lazy parser's arguments, and proves its help formats
        except SystemExit:  # its arguments need a missing extra (it said which, in one line)
            return
        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not groups:
            found[" ".join(path)] = parser
        for group in groups:
            for name, child in group.choices.items():
                walk(child, (*path, name))

    walk(build_parser(), ())
    return found


COMMANDS = _commands()


def _values(action: argparse.Action) -> bool:
    return action.nargs != 0 and not isinstance(action, argparse._HelpAction)


def _in_domain(validator: Validator, text: str) -> bool | None:
    """Whether ``text`` lies in the domain ``validator`` declares (None: either outcome is right),
    decided here from the declaration, not by calling the validator."""
    kind = validator.kind
    if kind == "integer":
        try:
            value = int(text, 10)
        except ValueError:
            return False
        return validator.low <= value <= validator.high  # type: ignore[attr-defined]
    if kind == "number":
        try:
            value = float(text)
        except ValueError:
            return False
        low, high = validator.low, validator.high  # type: ignore[attr-defined]
        above = value > low if validator.low_open else value >= low  # type: ignore[attr-defined]
        below = value < high if validator.high_open else value <= high  # type: ignore[attr-defined]
        return math.isfinite(value) and above and below
    if kind == "choice":
        return text in validator.names  # type: ignore[attr-defined]
    if kind == "names":
        parts = [p.strip() for p in text.split(validator.separator)]  # type: ignore[attr-defined]
        return all(p in validator.names for p in parts) and len(set(parts)) == len(parts)  # type: ignore[attr-defined]
    if kind == "numbers":
        parts = [p.strip() for p in text.split(",")]
        if not text.strip() or not all(p in validator.words or _in_domain(validator.element, p)  # type: ignore[attr-defined]
                                       for p in parts):
            return False
        numbers = [float(p) for p in parts if p not in validator.words]  # type: ignore[attr-defined]
        return not validator.increasing or numbers == sorted(set(numbers))  # type: ignore[attr-defined]
    if kind == "text":
        return bool(text.strip()) and len(text) <= validator.max_length  # type: ignore[attr-defined]
    if kind == "output":
        if not text.strip() or any(len(part) > 255 for part in Path(text).parts):
            return False
        return None  # a new path: whether it can be created depends on the machine (root, permissions)
    return False  # inputs (nothing hostile exists), addresses and custom values: every hostile value is refused


def _argv(command: str, parser: argparse.ArgumentParser, workdir: Path, skip: argparse.Action | None) -> list[str]:
    """The command with a valid value for every required option and positional but ``skip``."""
    argv = command.split()
    for action in parser._actions:
        if action is skip or not _values(action) or not (action.required or not action.option_strings):
            continue
        validator = validator_of(action)
        assert validator is not None, f"{command}: {action.dest} has no validator"
        value = validator.example(workdir)
        argv += [f"{action.option_strings[-1]}={value}"] if action.option_strings else [value]
    return argv


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """The commands' work replaced by a stub that records what reached it; one parser for all calls."""
    reached: list[argparse.Namespace] = []
    parser = build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(cli, "_dispatch", lambda args: reached.append(args) or 0)
    return reached


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_the_walk_finds_every_command() -> None:
    """A check that finds nothing passes nothing: the walk sees the commands the README lists."""
    core = {"check", "findings", "certify", "report", "widths", "calibrate", "repro readme", "bench solvers"}
    with_torch = {"repro fig4", "repro fig8", "repro fig7", "bench lm-step"}
    assert core | (with_torch if importlib.util.find_spec("torch") else set()) <= set(COMMANDS)


def _hostile_problems(command: str, parser: argparse.ArgumentParser, tmp_path: Path, reached: list[Any],
                      capsys: pytest.CaptureFixture[str]) -> tuple[list[str], int]:
    """Feed every option of ``command`` every hostile value (run from an empty directory); the problems
    found and the number of values tried."""
    examples, cwd = tmp_path / "examples", tmp_path / "cwd"
    examples.mkdir(parents=True)
    cwd.mkdir()
    os.chdir(cwd)
    try:
        baseline: object = cli.main(_argv(command, parser, examples, None))
    except Exception as error:  # reported below
        baseline = error
    problems = [] if baseline == 0 and len(reached) == 1 else [f"the command with valid values: {baseline!r}, "
                                                                 f"{capsys.readouterr().err!r}"]
    capsys.readouterr()
    tried = 0
    for action in parser._actions:
        if not action.option_strings and not _values(action):
            continue
        name = max(action.option_strings, key=len) if action.option_strings else action.dest
        validator = validator_of(action)
        if not _values(action):  # a flag takes no value: one given is a usage error
            values = {"a value given to a flag": f"{name}=nosuch"}
        elif validator is None:
            problems.append(f"{name}: no validator from sltcheck.cli.options (nor choices)")
            continue
        else:
            values = {label: text for label, text in HOSTILE.items()
                      if action.option_strings or not text.startswith("-")}
        for label, text in values.items():
            tried += 1
            if validator is None:
                argv, expected = [*_argv(command, parser, examples, action), text], False
            else:
                given = [f"{name}={text}"] if action.option_strings else [text]
                argv, expected = [*_argv(command, parser, examples, action), *given], _in_domain(validator, text)
            reached.clear()
            try:
                status = cli.main(argv)
            except BaseException as error:  # anything escaping main is a finding
                problems.append(f"{name} {label} ({text!r}): {type(error).__name__} escaped main: {error}")
                continue
            problems += _outcome_problems(f"{name} {label} ({text!r})", name, bool(action.option_strings), expected,
                                          status, capsys.readouterr().err, bool(reached), cwd)
    return problems, tried


def _outcome_problems(case: str, name: str, is_option: bool, expected: bool | None, status: object, err: str,
                      reached: bool, cwd: Path) -> list[str]:
    """What is wrong with one hostile value's outcome: a traceback, a refusal not in one line naming the
    option, an unexpected status, or a file created."""
    problems = []
    lines = [line for line in err.splitlines() if line.strip()]
    if "Traceback" in err:
        problems.append(f"{case}: a traceback")
    if expected is not True and status == 2:
        if len(lines) != 1 or not lines[0].startswith("sltcheck: error: "):
            problems.append(f"{case}: not one line: {lines}")
        elif is_option and name not in lines[0]:
            problems.append(f"{case}: the line does not name the option: {lines[0]}")
    elif expected is False or (expected is True and (status != 0 or not reached)):
        problems.append(f"{case}: status {status} (expected "
                        f"{'acceptance' if expected else 'exit 2'}); stderr {lines}")
    if _files(cwd) or os.path.exists("/nonexistent/sltcheck-missing"):
        problems.append(f"{case}: created {_files(cwd)}")
    return problems


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_refuses_hostile_values_in_one_line(command: str, tmp_path: Path, stubbed: list[Any],
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    problems, tried = _hostile_problems(command, COMMANDS[command], tmp_path, stubbed, capsys)
    assert not problems, "\n".join(problems)
    assert tried >= len(HOSTILE) or command == "repro readme"


class _Lenient(Integer):
    """A mutant validator: declares 1..10 but lets 0 and nan through (as int("0") and a crash later)."""

    def __call__(self, text: str) -> int:
        return 0 if text in ("0", "nan") else super().__call__(text)


def _crashes(args: argparse.Namespace) -> int:
    raise ValueError(f"a traceback from a value nobody checked: {args.count}")


def test_the_walk_refutes_an_option_that_lets_a_bad_value_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The walk can fail: a command whose option declares 1..10 but accepts 0 and nan, an option with no
    validator beyond argparse's bare int, and a handler that writes a file before it crashes."""
    from sltcheck.cli import CommandLine

    def writes_then_crashes(args: argparse.Namespace) -> int:
        Path("half-written").write_text("")
        return _crashes(args)

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--count", type=_Lenient(1, 10), default=1)
        parser.add_argument("--bare", type=int, default=0)

    mutant = CommandLine()
    mutant.command("mutant", "a command with a lenient option", writes_then_crashes, arguments=arguments)
    monkeypatch.setattr(cli, "build_parser", lambda: mutant.parser)
    monkeypatch.chdir(tmp_path)
    reached: list[Any] = []
    monkeypatch.setattr(cli, "_dispatch", lambda args: reached.append(args) or 0)
    parser = next(iter(mutant.parser._actions[-1].choices.values()))  # type: ignore[attr-defined]
    parser.format_help()
    problems, _ = _hostile_problems("mutant", parser, tmp_path, reached, capsys)
    assert any("--count zero" in p and "expected exit 2" in p for p in problems), problems
    assert any("--count nan" in p for p in problems), problems
    assert not any("--bare nan" in p for p in problems)  # a bare type=int gets the default validator
    monkeypatch.setattr(cli, "_dispatch", lambda args: writes_then_crashes(args))
    problems, _ = _hostile_problems("mutant", parser, tmp_path / "again", reached, capsys)
    assert any("escaped main" in p or "traceback" in p for p in problems), problems


@pytest.mark.parametrize("command", sorted({"", *(" ".join(c.split()[:i]) for c in COMMANDS
                                                   for i in range(1, len(c.split()) + 1))}))
def test_every_help_prints(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``sltcheck [GROUP [NAME]] --help`` (``repro --help`` crashed on a '%' in fig7's help)."""
    assert cli.main([*command.split(), "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: sltcheck")
    assert "Traceback" not in captured.err
    assert "%%" not in captured.out  # a '%' escaped for argparse is shown once


@pytest.mark.parametrize("argv", [[], ["nosuch"], ["repro"], ["repro", "nosuch"], ["bench", "fig4"]])
def test_an_unknown_or_missing_command_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("sltcheck: error: "), lines


# --- issue 34's cases, replayed as the hostile user ran them (the real commands, their work guarded) ------------

ISSUE_CASES = [
    (["repro", "fig8", "--preset", "nosuch"], "--preset: must be one of cpu-tiny"),
    (["repro", "fig8", "--data", "{empty}"], "--data: '{empty}': data_dir must contain WikiText"),
    (["repro", "fig8", "--scales", "abc"], "--scales: must be comma-separated values"),
    (["repro", "fig8", "--keep-fraction", "2"], "--keep-fraction: must be a number > 0 and <= 1, got '2'"),
    (["repro", "fig8", "--keep-fraction", "nan"], "--keep-fraction: must be a number > 0 and <= 1, got 'nan'"),
    (["repro", "fig8", "--seeds", "0"], "--seeds: must be an integer from 1"),
    (["repro", "fig8", "--lr", "-1"], "--lr: must be a number > 0"),
    (["repro", "fig8", "--masked", "nosuch"], "--masked: masked must be '+'-joined groups"),
    (["repro", "fig8", "--scope", "nosuch"], "--scope: must be one of per-tensor, global"),
    (["repro", "fig8", "--steps", "0"], "--steps: must be an integer from 1"),
    (["repro", "fig8", "--steps", "2"], "--steps must be at least the epochs (4), got 2"),
    (["repro", "fig8", "--min-lr", "1"], "--lr / --min-lr / --weight-decay (preset cpu-tiny): min_lr must be <= lr"),
    (["repro", "fig8", "--tokenizer", "/nonexistent"], "--tokenizer: '/nonexistent' does not exist"),
    (["repro", "fig8", "--device", "cuda"], "--device: device must be 'cpu' or 'auto' here: CUDA is not available"),
    (["repro", "fig7", "--sizes", "nosuch"], "--sizes: must be distinct names"),
    (["bench", "lm-step", "--preset", "nosuch"], "--preset: must be one of cpu-tiny"),
    (["bench", "lm-step", "--repeats", "0"], "--repeats: must be an integer from 1"),
    (["bench", "lm-step", "--batch-size", "-1"], "--batch-size: must be an integer from 1"),
    (["bench", "lm-step", "--device", "nosuch"], "--device: device must be one of 'auto', 'cpu', 'cuda'"),
    (["bench", "lm-step", "--threads", "0"], "--threads: must be an integer from 1"),
    (["findings", "--in", "{file}", "--readme", "nosuch.md"], "--readme: 'nosuch.md' does not exist"),
    (["certify", "--readme", "nosuch.md"], "--readme: 'nosuch.md' does not exist"),
    (["certify", "--readme", "{file}"], "lacks the marker line '<!-- sltcheck certify --readme"),
    (["certify", "--family", "nosuch"], "--family: must be a family's name or key"),
    (["certify", "--only", "nosuch"], "--only: must be one of lemma2"),
    (["certify", "--tolerance", "nan"], "--tolerance: must be a number > 0 and < 1, got 'nan'"),
    (["certify", "--seeds", "nosuch.json"], "--seeds: 'nosuch.json' does not exist"),
    (["certify", "--findings", "nosuch.json"], "--findings: 'nosuch.json' does not exist"),
    (["certify", "--family", "lemma8/d1-T2/as-stated", "--backend", "arrays"],
     "--backend: backend 'arrays' encloses only vectorised families; lemma8/d1-T2/as-stated is not one"),
    (["repro", "readme", "--in", "nonexist"], "--in: 'nonexist' does not exist"),
    (["check", "--out", "x" * 300], "--out: is too long a path"),
    (["check", "--out="], "--out: must name a path, got ''"),
    (["repro", "fig4", "--out="], "--out: must name a path, got ''"),
    (["widths", "--eps", "0.1", "--heads", "1", "--d1", "999999999999"],
     "--d1: must be an integer from 1 to 500000000000, got '999999999999'"),
    (["widths", "--eps", "0.1", "--heads", "1", "--d1", "1", "--alpha", "1e308"],
     "--alpha: must be a number > 0 and <= 1e+150, got '1e308'"),
    (["calibrate", "--decay-trials", "-1"], "--decay-trials: must be an integer from 0"),
]

# What each command would start if a bad value got through (each must stay untouched).
WORK = ("sltcheck.repro.lm.sweeps.run_sweep", "sltcheck.repro.lm.sweeps.load_data_for",
        "sltcheck.repro.lm.bench.bench_lm_step", "sltcheck.repro.synthetic.run", "sltcheck.certify.run.certify_family",
        "sltcheck.checking.check_variant", "sltcheck.pruning.calibration.calibrate", "sltcheck.pruning.widths.widths")


@pytest.mark.parametrize(("argv", "fragment"), ISSUE_CASES, ids=[" ".join(a)[:60] for a, _ in ISSUE_CASES])
def test_the_issues_bad_options_are_one_line_before_any_work(argv: list[str], fragment: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    if argv[1:2] in (["fig7"], ["fig8"], ["lm-step"]) and not importlib.util.find_spec("torch"):
        pytest.skip("the GPT-2 commands need torch (their missing extra: tests/test_extras.py)")
    if "cuda" in argv:
        torch = pytest.importorskip("torch")
        if torch.cuda.is_available():
            pytest.skip("this machine has CUDA: --device cuda is valid here")
    inputs, cwd = tmp_path / "inputs", tmp_path / "cwd"
    (inputs / "empty").mkdir(parents=True)
    (inputs / "file.json").write_text("{}")
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("SLTCHECK_WIKITEXT_DIR", str(Path(__file__).resolve().parent))  # not needed to fail
    for work in WORK:
        module, name = work.rsplit(".", 1)
        monkeypatch.setattr(f"{module}.{name}", lambda *args, _name=name, **kwargs: pytest.fail(f"{_name} started"))
    places = {"{empty}": str(inputs / "empty"), "{file}": str(inputs / "file.json")}
    for key, value in places.items():
        argv, fragment = [a.replace(key, value) for a in argv], fragment.replace(key, value)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("sltcheck: error: "), err
    assert fragment in lines[0]
    assert not list(cwd.iterdir())


def _markers() -> dict[str, tuple[str, str]]:
    from sltcheck.cli.bench import README_END as BENCH_END
    from sltcheck.cli.bench import README_START as BENCH_START
    from sltcheck.cli.certify import README_END, README_START
    from sltcheck.report import findings_text
    from sltcheck.repro import readme

    return {"findings --readme": (findings_text.START, findings_text.END),
            "findings --headline": (findings_text.HEADLINE_START, findings_text.HEADLINE_END),
            "repro readme --readme": (readme.START, readme.END),
            "certify --readme": (README_START, README_END),
            "bench solvers --readme": (BENCH_START, BENCH_END)}


PAGE_WRITERS = {
    "findings --readme": ["findings", "--readme", "{page}", "--in", "{file}"],
    "findings --headline": ["findings", "--headline", "{page}", "--in", "{file}"],
    "repro readme --readme": ["repro", "readme", "--readme", "{page}", "--in", "{file}"],
    "certify --readme": ["certify", "--only", "lemma8", "--family", "d1-T3", "--rounds", "1", "--readme", "{page}"],
    "bench solvers --readme": ["bench", "solvers", "--sizes", "8", "--problems", "1", "--readme", "{page}"],
}


@pytest.mark.parametrize("writer", PAGE_WRITERS)
def test_a_page_whose_end_marker_precedes_its_start_is_refused_before_any_work(
        writer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42: a page whose end marker stands before its start marker passed the options' check and
    ended in a traceback after the work (``certify`` ran every family first)."""
    from sltcheck.readme_section import rewrite_section

    start, end = _markers()[writer]
    page = tmp_path / "page.md"
    text = f"{end}\nkept\n{start}\n"
    page.write_text(text)
    (tmp_path / "file.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    for work in (*WORK, "sltcheck.cli.bench.benchmark_solvers", "sltcheck.findings.load_complete"):
        module, name = work.rsplit(".", 1)
        monkeypatch.setattr(f"{module}.{name}", lambda *args, _name=name, **kwargs: pytest.fail(f"{_name} started"))
    argv = [a.replace("{page}", str(page)).replace("{file}", str(tmp_path / "file.json")) for a in PAGE_WRITERS[writer]]
    assert cli.main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("sltcheck: error: --"), lines
    assert str(page) in lines[0], lines
    assert "before its start marker" in lines[0], lines
    assert page.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.json", "page.md"]  # no run directory started
    with pytest.raises(ValueError, match="before its start marker"):  # the writer itself, the last guard
        rewrite_section(page, start, end, "new\n")
    assert page.read_text() == text


def test_a_calibration_file_whose_c_overflows_the_widths_is_one_line(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 42: ``widths --calibrated`` with C = 1e308 ended in an OverflowError."""
    from sltcheck.pruning import widths

    for text in ('{"C": 1e308}', '{"C": Infinity}'):
        path = tmp_path / "calibration.json"
        path.write_text(text)
        assert cli.main(["widths", "--eps", "0.1", "--heads", "1", "--d1", "1", "--calibrated", str(path)]) == 2
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(lines) == 1, lines
        assert lines[0].startswith("sltcheck: error: --calibrated: "), lines
        assert "above 1e+150" in lines[0], lines
        assert str(path) in lines[0], lines
    with pytest.raises(ValueError, match=r"C: the width d1 \* C \* log\(...\) = 8\.7\d*e\+313 .* exceeds the largest"):
        widths.widths(eps=0.1, H=1, d1=10**12, d2=1, alpha=None, L=1, B=None, C=1e300)
