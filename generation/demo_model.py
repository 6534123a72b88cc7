"""The demo model: an OpenAI-compatible server that writes scripted text, so every model feature can be tried
offline on a fresh install. It is **not a language model**: it reads which job or judge prompt it was sent
(the output schema it must fill, the prompt's language, the question's options) and fills the schema with
fixed, plausible Portuguese or English text chosen by a hash of the prompt.

    python -m generation.demo_model --port 8001        # `make run` starts it beside the site

Endpoints: ``POST /v1/chat/completions`` (JSON mode or a JSON schema in the prompt), ``POST /v1/embeddings``
(a deterministic bag-of-words vector per text, so texts sharing words are close) and ``GET /v1/models``.
Every completion says ``"system_fingerprint": "scripted"``; the model's name says it too
(:data:`DEMO_MODEL_NAME`), and that name is what the site records as the author of everything it writes.

The module is free of Django: the test suite's scripted server (``tests/fake_llm.py``) is built on its parts.
"""

import argparse
import hashlib
import itertools
import json
import math
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEMO_MODEL_NAME = "scripted demo (not a language model)"
DEMO_ENDPOINT_NAME = "demo model (scripted — not a language model)"
SCRIPTED_FINGERPRINT = "scripted"

_SCHEMA_BLOCK = re.compile(r"```json\n(\{.*?\})\n```", re.DOTALL)

# --- what a request asks for ----------------------------------------------------------------------------


def prompt_text(body: dict) -> str:
    return "\n".join(message.get("content") or "" for message in body.get("messages", []))


def requested_schema(body: dict) -> dict | None:
    """The JSON schema a request asks its reply to follow: ``response_format``'s, else the prompt's last block."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return response_format.get("json_schema", {}).get("schema")
    blocks = _SCHEMA_BLOCK.findall(prompt_text(body))
    return json.loads(blocks[-1]) if blocks else None


_PORTUGUESE = re.compile(
    r"\b(você|pergunta|perguntas|resposta|respostas|não|são|é|uma|um|para|com|classe|contexto|opções|"
    r"o|da|de|do|das|dos|que|mais|em|na|no|nas|nos|os|as|ao|pela|pelo|se|ou|por|sobre|isso|está)\b"
)
_ENGLISH = re.compile(
    r"\b(you|question|questions|answer|answers|the|is|are|with|class|context|options|"
    r"of|and|to|in|that|more|an|on|by|it|or|if|for|will|would|have)\b"
)


def is_portuguese(text: str) -> bool:
    lowered = text.lower()
    return len(_PORTUGUESE.findall(lowered)) > len(_ENGLISH.findall(lowered))


def _pick(options: list[str], *seeds) -> str:
    digest = hashlib.sha256("|".join(str(seed) for seed in seeds).encode("utf-8")).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


def _letters(prompt: str) -> list[str]:
    """The option letters a prompt offers: a list such as ``(A, B, C, D)`` or ``A–E``, else lines ``A) …``."""
    listed = re.findall(r"\(([A-Z](?:\s*[,/]\s*(?:or |ou )?[A-Z])+)\)", prompt)
    if listed:
        return re.findall(r"[A-Z]", listed[-1])
    span = re.search(r"\b([A-Z])\s*[–-]\s*([A-Z])\b", prompt)
    if span and span.group(1) < span.group(2):
        return [chr(code) for code in range(ord(span.group(1)), ord(span.group(2)) + 1)]
    lines = re.findall(r"^\s*([A-Z])[).:]\s", prompt, re.MULTILINE)
    return lines or ["A", "B", "C", "D"]


def _asks_yes_no(prompt: str) -> bool:
    lowered = prompt.lower()
    return (
        "yes or no" in lowered
        or "sim ou não" in lowered
        or '{"answer": "yes"}' in lowered
        or '{"answer": "sim"}' in lowered
    )


def _asks_letter(prompt: str) -> bool:
    lowered = prompt.lower()
    return "letter" in lowered or "letra" in lowered


def _count(prompt: str) -> int | None:
    found = re.search(r"(?:exactly|exatamente|write|escreva)\s+(\d+)\s", prompt, re.IGNORECASE)
    return int(found.group(1)) if found else None


def _causal_class(prompt: str) -> str:
    lowered = prompt.lower()
    for name, words in (
        ("counterfactual", ('"counterfactual"', '"contrafactual"', "class counterfactual")),
        ("interventional", ('"interventional"', '"intervencional"', "class interventional")),
        ("associational", ('"associational"', '"associacional"', "class associational")),
    ):
        if any(word in lowered for word in words):
            return name
    return "interventional"


# --- the scripted texts ---------------------------------------------------------------------------------

# Causes and effects the scripted questions combine with each class's patterns (20 questions per class).
PAIRS = {
    "pt": [
        ("dormir menos", "mais dificuldade de concentração"),
        ("ler todos os dias", "notas melhores em redação"),
        ("fazer exercício regularmente", "menos dores nas costas"),
        ("trabalhar de casa", "mais horas de trabalho"),
        ("beber mais água", "menos dores de cabeça"),
        ("usar o celular à noite", "um sono pior"),
        ("estudar em grupo", "mais facilidade nas provas"),
        ("cozinhar em casa", "gastos menores no mês"),
        ("ir de bicicleta ao trabalho", "mais disposição"),
        ("tomar sol pela manhã", "um humor melhor"),
    ],
    "en": [
        ("sleep less", "more trouble concentrating"),
        ("read every day", "better marks in essays"),
        ("exercise regularly", "less back pain"),
        ("work from home", "longer working hours"),
        ("drink more water", "fewer headaches"),
        ("use the phone at night", "worse sleep"),
        ("study in a group", "an easier time in exams"),
        ("cook at home", "lower monthly expenses"),
        ("cycle to work", "more energy"),
        ("get morning sunlight", "a better mood"),
    ],
}
PATTERNS = {
    "pt": {
        "associational": ["Quem costuma {c} tem {e}?", "Pessoas que passam a {c} relatam {e}?"],
        "interventional": [
            "Se eu começar a {c}, vou ter {e}?",
            "O que acontece se uma pessoa passar a {c}: ela terá {e}?",
        ],
        "counterfactual": [
            "Se eu tivesse começado a {c} há um ano, teria hoje {e}?",
            "Eu teria {e} se nunca tivesse deixado de {c}?",
        ],
    },
    "en": {
        "associational": ["Do people who {c} tend to have {e}?", "Is {e} more common among people who {c}?"],
        "interventional": [
            "If I start to {c}, will I have {e}?",
            "What happens if someone begins to {c}: will they have {e}?",
        ],
        "counterfactual": [
            "If I had started to {c} a year ago, would I have {e} today?",
            "Would I have {e} if I had never stopped trying to {c}?",
        ],
    },
}


def scripted_questions(language: str, causal_class: str) -> list[str]:
    return [
        pattern.format(c=cause, e=effect)
        for cause, effect in PAIRS[language]
        for pattern in PATTERNS[language][causal_class]
    ]


TEXTS = {
    "pt": {
        "answer": [
            "Provavelmente sim. A causa muda as condições que levam ao efeito: quando ela está presente, o "
            "efeito fica mais frequente, embora outros fatores, como a renda e a idade, também pesem.",
            "Em boa parte dos casos, sim, mas não sozinha: o efeito depende também do contexto, e estudos que "
            "comparam grupos parecidos mostram uma diferença moderada.",
            "Não necessariamente. A relação observada pode vir de uma causa comum às duas coisas; só uma "
            "intervenção controlada mostraria o efeito próprio da causa.",
        ],
        "rationale": [
            "A pergunta trata do efeito de uma mudança, e não apenas de uma correlação observada.",
            "A pergunta imagina um passado diferente do que aconteceu, o que exige raciocínio contrafactual.",
            "A pergunta compara grupos observados, sem intervir em nada.",
        ],
        "explanation": [
            "O cenário descreve a causa agindo diretamente sobre o efeito; por isso a resposta segue dele.",
            "Sem a causa, o mecanismo descrito no cenário não se completa, e o efeito não ocorre.",
        ],
        "reasoning": [
            "O contexto liga a causa ao efeito por um mecanismo direto; as outras opções contradizem o contexto "
            "ou invertem a direção causal.",
        ],
        "justification": [
            "A resposta trata do que a pergunta pede, com um mecanismo causal claro e sem contradições.",
            "A resposta é fluente e relevante, mas deixa de citar um fator importante.",
        ],
        "chain": [
            "chuva forte → rio transborda → ruas alagadas",
            "estudo diário → mais prática → nota maior",
        ],
        "context": [
            "Depois de uma semana de chuvas fortes, o rio que corta a cidade subiu dois metros e várias ruas "
            "ficaram alagadas.",
        ],
        "sentence": ["Naquela manhã, a padaria da esquina abriu meia hora mais tarde."],
        "option_text": [
            "A chuva não teve relação com o alagamento.",
            "As ruas alagaram porque o comércio fechou mais cedo.",
            "O alagamento das ruas fez o rio subir.",
            "A prefeitura pintou as faixas de pedestres naquela semana.",
        ],
        "changes": ["Deixei a resposta mais direta e acrescentei o mecanismo causal que faltava."],
        "scenario": [
            "Uma escola passou a servir café da manhã a todos os alunos. No mesmo semestre, as faltas caíram e "
            "as notas de matemática subiram.",
        ],
        "cause": ["café da manhã na escola"],
        "effect": ["menos faltas"],
        "entity": ["Rio Tietê"],
        "invented_entity": ["Rio Varaquém"],
        "removed_cause": ["a chuva forte"],
        "other": ["Texto de demonstração escrito pelo modelo roteirizado."],
    },
    "en": {
        "answer": [
            "Most likely, yes. The cause changes the conditions that lead to the effect: when it is present the "
            "effect becomes more frequent, although other factors, such as income and age, also matter.",
            "In many cases, yes, but not on its own: the effect also depends on the setting, and studies that "
            "compare similar groups find a moderate difference.",
            "Not necessarily. The association may come from a cause common to both; only a controlled "
            "intervention would show the cause's own effect.",
        ],
        "rationale": [
            "The question asks about the effect of a change, not only about an observed correlation.",
            "The question imagines a past different from what happened, which calls for counterfactual reasoning.",
            "The question compares observed groups without intervening in anything.",
        ],
        "explanation": [
            "The scenario describes the cause acting directly on the effect, so the answer follows from it.",
            "Without the cause, the mechanism the scenario describes is not completed and the effect does not occur.",
        ],
        "reasoning": [
            "The context links the cause to the effect through a direct mechanism; the other options contradict "
            "the context or reverse the causal direction.",
        ],
        "justification": [
            "The answer addresses what the question asks, with a clear causal mechanism and no contradictions.",
            "The answer is fluent and relevant but leaves out an important factor.",
        ],
        "chain": [
            "heavy rain → river overflows → flooded streets",
            "daily study → more practice → higher mark",
        ],
        "context": [
            "After a week of heavy rain, the river that crosses the town rose two metres and several streets "
            "were flooded.",
        ],
        "sentence": ["That morning, the bakery on the corner opened half an hour late."],
        "option_text": [
            "The rain had nothing to do with the flooding.",
            "The streets flooded because the shops closed early.",
            "The flooded streets made the river rise.",
            "The council repainted the zebra crossings that week.",
        ],
        "changes": ["Made the answer more direct and added the missing causal mechanism."],
        "scenario": [
            "A school started serving breakfast to every pupil. In the same term, absences fell and maths marks "
            "rose.",
        ],
        "cause": ["breakfast at school"],
        "effect": ["fewer absences"],
        "entity": ["River Thames"],
        "invented_entity": ["River Varquen"],
        "removed_cause": ["the heavy rain"],
        "other": ["Demonstration text written by the scripted model."],
    },
}

_ALIASES = {
    "question": "question",
    "answer": "answer",
    "rationale": "rationale",
    "reasoning": "reasoning",
    "explanation": "explanation",
    "justification": "justification",
    "chain": "chain",
    "correct_chain": "chain",
    "corrupted_chain": "chain",
    "context": "context",
    "sentence": "sentence",
    "option_text": "option_text",
    "changes": "changes",
    "scenario": "scenario",
    "cause": "cause",
    "effect": "effect",
    "entity": "entity",
    "invented_entity": "invented_entity",
    "removed_cause": "removed_cause",
}


class ScriptedWriter:
    """Fills a request's schema with scripted text suited to the field, the prompt's language and its kind."""

    def __init__(self, body: dict):
        self.prompt = prompt_text(body)
        self.language = "pt" if is_portuguese(self.prompt) else "en"
        self.texts = TEXTS[self.language]
        self.serial = itertools.count()

    def reply(self, schema: dict | None) -> object:
        if not schema:
            return {"answer": self._string("answer", {})}
        return self._value(schema, "", "")

    def _seed(self, field: str):
        return (self.prompt, field, next(self.serial))

    def _string(self, field: str, schema: dict) -> str:
        key = _ALIASES.get(field)
        if field == "question":
            text = _pick(scripted_questions(self.language, _causal_class(self.prompt)), *self._seed(field))
        elif field == "answer" and _asks_letter(self.prompt):
            text = _pick(_letters(self.prompt), *self._seed(field))
        elif field == "answer" and _asks_yes_no(self.prompt):
            yes, no = ("sim", "não") if '"sim"' in self.prompt else ("yes", "no")
            text = _pick([yes, no], *self._seed(field))
        elif key in self.texts:
            text = _pick(self.texts[key], *self._seed(field))
        elif field in ("correct_and_reliable", "correct_but_prone_to_error"):
            text = _pick(self.texts["explanation"], *self._seed(field))
        else:
            text = _pick(self.texts["justification" if "justif" in field else "other"], *self._seed(field))
        return text.ljust(schema.get("minLength", 0), ".")

    def _value(self, schema: dict, field: str, parent: str):
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            if set(schema["enum"]) <= {"yes", "no", "sim", "não"} and field == "causal":
                return (
                    "no" if "no" in schema["enum"] else schema["enum"][0]
                )  # decontamination: the pair stays
            return _pick(list(schema["enum"]), *self._seed(field))
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = kind[0]
        if kind == "object" or "properties" in schema:
            properties = schema.get("properties", {})
            names = schema.get("required") or list(properties)
            return {name: self._value(properties.get(name, {}), name, field) for name in names}
        if kind == "array":
            return self._array(schema, field)
        if kind == "integer":
            low, high = (
                int(schema.get("minimum", 1)),
                int(schema.get("maximum", schema.get("minimum", 1) + 4)),
            )
            return max(low, min(high, int(_pick(["3", "4", "4", "5"], *self._seed(field)))))
        if kind == "number":
            return float(schema.get("minimum", 1))
        if kind == "boolean":
            return True
        return self._string(field, schema)

    def _array(self, schema: dict, field: str) -> list:
        items = schema.get("items", {})
        size = max(schema.get("minItems", 1), 1)
        if field == "ranking" or items.get("pattern") == "^[A-Z]$":
            labels = _letters(self.prompt)[: max(size, len(_letters(self.prompt)))]
            order = sorted(labels, key=lambda label: hashlib.sha256((self.prompt + label).encode()).digest())
            return order
        if items.get("enum") and schema.get("uniqueItems"):
            return list(items["enum"])[:size]
        if field == "questions" and "maxItems" not in schema:
            size = max(size, _count(self.prompt) or 1)
        if "maxItems" in schema:
            size = min(max(size, schema["maxItems"]), schema["maxItems"])
        perspectives = (items.get("properties", {}).get("perspective") or {}).get("enum")
        values = []
        for index in range(size):
            value = self._value(items, "question" if field == "questions" else field, field)
            if perspectives and isinstance(value, dict) and "perspective" in value:
                value["perspective"] = perspectives[index % len(perspectives)]
            if field == "questions" and isinstance(value, dict) and "rationale" in value:
                value["question"] = self._new_question(index)
            values.append(value)
        return values

    def _new_question(self, index: int) -> str:
        """The index-th question of a batch: one of the class's questions the prompt does not already list."""
        pool = scripted_questions(self.language, _causal_class(self.prompt))
        fresh = [question for question in pool if question not in self.prompt] or pool
        return (
            fresh[(index + _start(self.prompt)) % len(fresh)]
            if index < len(fresh)
            else (f"{fresh[index % len(fresh)]} ({index // len(fresh) + 1})")
        )


def _start(prompt: str) -> int:
    return int.from_bytes(hashlib.sha256(prompt.encode("utf-8")).digest()[:2], "big")


def scripted_content(body: dict) -> str:
    """The demo model's reply to a chat-completions request body, as the JSON text a model would write."""
    return json.dumps(ScriptedWriter(body).reply(requested_schema(body)), ensure_ascii=False)


# --- schema examples (the test suite's default replies) -------------------------------------------------


def example_for_schema(schema: dict):
    """A value valid against ``schema``, with distinct strings, without a server."""
    return schema_example(schema, itertools.count(1))


def schema_example(schema: dict, counter):
    """A value valid against ``schema`` (the subset templates use), with distinct strings."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        names = schema.get("required") or list(properties)
        return {name: schema_example(properties.get(name, {}), counter) for name in names}
    if kind == "array":
        items = schema.get("items", {})
        size = max(schema.get("minItems", 1), 1)
        if items.get("enum") and schema.get("uniqueItems"):
            return list(items["enum"])[:size]
        if items.get("pattern") == "^[A-Z]$":  # labels of answers to rank
            return [chr(ord("A") + n) for n in range(size)]
        return [schema_example(items, counter) for _ in range(size)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return True
    if kind == "string":
        text = f"Texto gerado número {next(counter)}, com um mecanismo causal explicado."
        return text.ljust(schema.get("minLength", 0), ".")
    return None


# --- replies ---------------------------------------------------------------------------------------------


def completion(
    request: dict, content: str, finish_reason: str = "stop", fingerprint: str | None = None
) -> dict:
    prompt = prompt_text(request)
    reply = {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", DEMO_MODEL_NAME),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": len(prompt) // 4 + 1,
            "completion_tokens": len(content) // 4 + 1,
            "total_tokens": len(prompt) // 4 + len(content) // 4 + 2,
        },
    }
    if fingerprint:
        reply["system_fingerprint"] = fingerprint
    return reply


EMBEDDING_DIMENSIONS = 256


def _word_direction(word: str) -> list[float]:
    digest = hashlib.sha512(word.encode("utf-8")).digest() * 4
    return [(byte - 127.5) / 127.5 for byte in digest[:EMBEDDING_DIMENSIONS]]


def bag_of_words_embedding(text: str) -> list[float]:
    """The sum of the text's word directions, unit length (all zeros for a text without words)."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        for index, value in enumerate(_word_direction(word)):
            vector[index] += value
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


def embeddings(model: str, texts: list[str]) -> dict:
    return {
        "object": "list",
        "model": model,
        "data": [
            {"object": "embedding", "index": index, "embedding": bag_of_words_embedding(text)}
            for index, text in enumerate(texts)
        ],
        "usage": {
            "prompt_tokens": sum(len(text) // 4 + 1 for text in texts),
            "total_tokens": sum(len(text) // 4 + 1 for text in texts),
        },
    }


# --- the server ------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the site records every call itself
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": DEMO_MODEL_NAME, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "the request body is not JSON"}})
            return
        if self.path.rstrip("/").endswith("/embeddings"):
            texts = body.get("input") or []
            texts = [texts] if isinstance(texts, str) else texts
            self._send(200, embeddings(body.get("model", DEMO_MODEL_NAME), texts))
        elif self.path.rstrip("/").endswith("/chat/completions"):
            content = scripted_content(body)
            self._send(200, completion(body, content, fingerprint=SCRIPTED_FINGERPRINT))
        else:
            self._send(404, {"error": {"message": "not found"}})

    def _send(self, status: int, value: dict):
        data = json.dumps(value, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class DemoModelServer:
    """The demo model on ``host:port`` (port 0: one the system chooses), in a thread of its own."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self._server = _Server((host, port), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "DemoModelServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "DemoModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    server = _Server((args.host, args.port), _Handler)
    print(f"demo model (scripted — not a language model) at http://{args.host}:{args.port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
