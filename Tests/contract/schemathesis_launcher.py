"""Runs the schemathesis command line, after parsing the sources of schemathesis's modules once.

Hypothesis describes a lambda by parsing the whole module it comes from (`ast.parse`), the first
time, wherever that happens. Inside schemathesis's coverage phase that is deep in a recursion, and
CPython 3.11's parser then fails with "AST constructor recursion depth mismatch" (a CPython bug, not
a server failure), which schemathesis reports as a runtime error of its own. Parsing every module
here, at the top of the stack, into a cache every thread shares, means no parse happens down there.
"""

import ast
import importlib
import inspect
import pkgutil
import sys

import hypothesis
import schemathesis
import schemathesis.cli
from hypothesis.internal import lambda_sources


class SharedLambdaCache(dict):
    """Hypothesis's lambda cache, shared by every thread (its own is per thread, and schemathesis
    runs its workers in threads) and filled ahead."""


def parse_lambdas_ahead() -> int:
    """Parses every schemathesis and hypothesis module that has lambdas into the shared cache."""
    cache = SharedLambdaCache()
    for package in (schemathesis, hypothesis):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            try:
                module = importlib.import_module(info.name)
                lines, _ = inspect.findsource(module)
            except Exception:  # optional integrations (pytest, django, ...) that do not import here
                continue
            text = "".join(lines)
            if "lambda" in text:
                cache[tuple(lines)] = lambda_sources.extract_all_lambdas(ast.parse(text))
    lambda_sources.AST_LAMBDAS_CACHE = cache
    return len(cache)


if __name__ == "__main__":
    parse_lambdas_ahead()
    sys.argv[0] = "schemathesis"
    schemathesis.cli.schemathesis()
