"""S306's judgement: is the final reply of an unattended turn filler rather than an answer?

An unattended eve run whose model returned nothing was retried with a nudge, and the retry
answered with talk about itself ("I now have all the data I need."), an announcement ("Let me
compile the report."), a promise of content that never came ("Here is the report:", "The
summary will follow shortly.") or a bare acknowledgement ("Got it."). The judgement does not list
those phrasings; it asks what the reply *carries*, using the turn itself as evidence:

* a real answer delivers something: data (a digit, code, a link, a list or table), a word that
  also appears in the turn's tool results or runtime deliveries (a name, a value, a fact), an
  assertion about the world (a negation or status word: "no alerts", "nothing new", "healthy",
  "rien à signaler", "keine Probleme"), or exactly the reply the task asked for ("reply OK if ...");
* filler carries none of that and is process talk: at least half of its content words belong to
  the vocabulary agents use about their own work (have/need/gathered/compile/report/summary/now/
  below/here ...), or the reply is led by such talk ("I have reviewed all the pull requests.");
  words it shares with its task only name the topic. A reply ending with a colon promises
  content it never gives; a reply made only of acknowledgements ("Got it.") gives nothing.

Words are compared as tokens (sets, one pass); scripts written without spaces (Chinese, Japanese)
are matched by substring against short word lists and against the turn's string values. The reply
is at most `MAX_CHARS` long before anything runs, and the turn's evidence is bounded
(`MAX_EVIDENCE_CHARS`), so the work is linear in both. Word sets cover English, French, German,
Spanish, Portuguese, Italian and Dutch (and a few Chinese and Japanese words); a reply in another
language is called filler only when it ends with a colon. The labelled sets and their measured
precision and recall: tests/data/eve-filler/, docs/eve.md §4 and the README.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...text import js_trim

MAX_CHARS = 120
MAX_EVIDENCE_CHARS = 256 * 1024  # of tool-result text read per turn
MAX_EVIDENCE_VALUES = 5000  # string values kept for substring matching (unsegmented scripts)

# Data: any digit (counts, times, ids), code, a link, a table row or a list item.
_DATA = re.compile(r"\d|`|https?://|www\.|\|[^|\n]*\||^[ \t]*[-*+\u2022][ \t]", re.MULTILINE)
# A word: letters/digits, with inner apostrophes ("didn't", "j'ai" stays one token). Unambiguous:
# the apostrophe separates the repetitions, so matching is linear.
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_ELIDED = frozenset({"l", "d", "j", "qu", "n", "s", "c", "m", "t"})  # French elisions: l'analyse, j'ai
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_COLONS = (":", "\uff1a")


def _words(*groups: str) -> frozenset[str]:
    return frozenset(w for g in groups for w in g.split())


# Function words: carry no content of their own (English, French, German, Spanish, Portuguese).
FUNCTION = _words(
    "i me my we us our you your it its this that these those there the a an and or but so then of to in on at"
    " for from by with as about into through up out over is are was were be been being am do does did will"
    " would shall should can could may might must just also very really right too some any every each all"
    " both more what which who whom whose that's it's there's i'm i've i'll i'd we're we've we'll"
    " let's",
    "je j' j moi nous vous il elle le la les l l' un une des du de d d' et ou mais donc à au aux en dans sur"
    " pour par avec est sont ai a as avons été être suis vais va tout toute tous toutes ce cet cette ces qui"
    " que qu n s c m t",
    "ich mich mir wir uns du sie es der die das den dem des ein eine einen einem und oder aber also zu im in"
    " am an auf für von mit ist sind war habe hat haben bin werde wird alle alles jetzt nun",
    "yo me mi nosotros el la los las lo un una unos unas y o pero de del a al en con por para es son está"
    " están he ha hemos tengo toda todo todos todas que ya",
    "eu meu nós o a os as um uma e ou mas de do da dos das em no na nos nas com por para é são está estou"
    " tenho tem todo toda todos todas que já",
    "io mi noi il lo la i gli le un uno una e o ma di del della dei delle a al alla in con per da è sono ho"
    " abbiamo ha tutto tutta tutti tutte che già ora",
    "ik mij mijn wij we ons de het een en of maar van voor met in op aan te is zijn ben heb hebt heeft hebben"
    " al alle alles die dat deze nu",
)
# The vocabulary of an agent's own process: having/needing information, progress verbs in every
# form, announcement verbs, work products, and the adverbs that frame a coming deliverable.
PROCESS = _words(
    "have has had got gotten get need needed needs require required now next shortly soon moment momentarily"
    " below following follows follow here here's ahead go going about ready enough everything anything"
    " information info data details detail results result findings finding context picture overview full"
    " complete completed completing completion finished finish finishing done gathered gather gathering"
    " collected collect collecting collection retrieved retrieve retrieving pulled pull pulling obtained"
    " fetched fetching read reading scanned scanning reviewed review reviewing looked look looking gone went"
    " processed process processing"
    " analysed analyzed analyse analyze analysing analyzing analysis checked check checking compiled compile"
    " compiling prepared prepare preparing summarised summarized summarise summarize summarising summarizing"
    " summary summaries report reports reporting drafted draft drafting wrote write writing written generated"
    " generate generating assembled assemble assembling formatted format formatting finalised finalized"
    " finalise finalize finalising finalizing put putting together compose composing present presenting share"
    " sharing send sending post posting deliver delivering provide providing give giving coming stand"
    " breakdown digest notes task request job work let wrap wrapping",
    "maintenant données donnée nécessaires nécessaire besoin terminé terminée fini finie rassemblé collecté"
    " analyse analysé résumé rapport préparer prépare voici informations information prêt prête",
    "daten informationen brauche benötige fertig abgeschlossen gesammelt analyse analysiert bericht"
    " zusammenfassung erstelle erstellen hier folgt bereit",
    "información informacion datos necesito terminado revisar revisado recopilado análisis analisis informe"
    " resumen preparar voy aquí aqui listo",
    "dados preciso concluí conclui concluído análise analise relatório relatorio resumo preparar segue pronto",
    "dati informazioni necessari necessarie bisogno raccolto raccolti finito terminato completato analisi"
    " rapporto riepilogo preparo preparare ecco pronto",
    "gegevens informatie nodig klaar verzameld afgerond bekeken analyse rapport overzicht samenvatting maken"
    " ga hier volgt",
)
# Assertions about the world: negations and status words make a short reply an answer.
ASSERTION = _words(
    "no not none nothing nobody never without zero clear clean quiet silent calm healthy unhealthy fine"
    " green red degraded failed failing failure failures passed passing succeeded success successful"
    " broken error errors stable unchanged missing empty yes don't didn't doesn't isn't aren't"
    " wasn't weren't can't won't hasn't haven't",
    "rien aucun aucune pas sans jamais personne",
    "kein keine keinen nichts nie ohne",
    "ningún ninguno ninguna nada nunca sin",
    "nenhum nenhuma nada nunca sem",
    "nessun nessuno nessuna niente nulla mai senza",
    "geen niets nooit zonder",
)
# Whole-reply acknowledgements (each comma-separated piece of the reply is one of these).
ACKNOWLEDGEMENTS = frozenset(
    {
        "ok", "okay", "k", "got it", "understood", "sure", "sure thing", "noted", "will do", "alright",
        "all right", "on it", "sounds good", "thanks", "thank you", "roger", "acknowledged", "of course",
        "d'accord", "bien reçu", "compris", "alles klar", "verstanden", "in ordnung", "entendido", "de acuerdo",
        "vale", "entendi", "certo", "combinado", "va bene", "capito", "d'accordo", "prima", "oké", "begrepen",
        "好的", "收到", "明白", "了解", "承知しました", "わかりました",
    }
)  # fmt: skip
# Interjections a reply may open with; they say nothing and are skipped at the start.
OPENERS = _words(
    "alright ok okay great perfect good so well right excellent awesome now done then",
    "bon alors gut also vale bueno bom",
)
# Subjects that make a sentence about the agent itself.
SELF = _words("i i've i'm i'll i'd we we've we're we'll let let's j je ich wir yo eu io ik")
# Unsegmented scripts: process and assertion vocabulary matched as substrings.
CJK_PROCESS = (
    "数据", "报告", "全部", "所需", "拿到", "已经", "整理", "总结", "以下",
    "データ", "レポート", "揃い", "必要", "すべて", "まとめ",
)  # fmt: skip
CJK_ASSERTION = ("没有", "无", "正常", "失败", "成功", "ない", "ません", "問題", "異常")


@dataclass(frozen=True)
class TurnEvidence:
    """What the turn itself holds: the words and string values of its tool results and runtime
    deliveries, and the task text (to recognise exactly the reply it asked for)."""

    terms: frozenset[str] = frozenset()
    values: tuple[str, ...] = ()  # lower-cased string values written without spaces (CJK)
    task: frozenset[str] = frozenset()

    @classmethod
    def collect(cls, results: Iterable[Any], task: str = "") -> TurnEvidence:
        return cls.from_lowered(lowered_strings(results), task_words(task))

    @classmethod
    def from_lowered(cls, strings: list[str], task: frozenset[str]) -> TurnEvidence:
        """The evidence of results whose `lowered_strings` are `strings`, for a task of words `task`."""
        terms: set[str] = set()
        values: list[str] = []
        for lowered in strings:
            terms.update(words(lowered))
            if len(values) < MAX_EVIDENCE_VALUES and _CJK.search(lowered) and 1 < len(lowered) <= 40:
                values.append(lowered)
        return cls(frozenset(terms), tuple(values), task)

    def holds_term(self, tokens: list[str]) -> bool:
        """Some of `tokens` is a word of the turn's results."""
        terms = self.terms
        return any(t in terms for t in tokens)

    def holds_value(self, lowered: str) -> bool:
        """Some (CJK) string value of the turn's results is inside `lowered`."""
        return any(v in lowered for v in self.values)


def task_words(task: str) -> frozenset[str]:
    return frozenset(words(task[:MAX_EVIDENCE_CHARS].lower()))


def lowered_strings(results: Iterable[Any]) -> list[str]:
    """The string values of `results` (walked in order, up to MAX_EVIDENCE_CHARS), lower-cased."""
    strings: list[str] = []
    budget = MAX_EVIDENCE_CHARS
    for value in results:
        budget = _strings(value, strings, budget)
        if budget <= 0:
            break
    return [s.lower() for s in strings]


class LazyEvidence:
    """`TurnEvidence.collect(results, task)`, worked out only as far as the judgement asks: the
    task's words when first asked; the results' strings, lower-cased, when a word is looked up,
    and their words only when one of the words looked up is inside one of them (a word of a
    string is a substring of it); their CJK values only for a reply that holds a CJK character
    (each value holds one). `tests/eve/test_fast_paths.py` compares the verdicts with
    `TurnEvidence`'s."""

    def __init__(self, results: list[Any], task: str) -> None:
        self._results = results
        self._task = task
        self._task_words: frozenset[str] | None = None
        self._lowered: list[str] | None = None
        self._full: TurnEvidence | None = None

    @property
    def task(self) -> frozenset[str]:
        if self._task_words is None:
            self._task_words = task_words(self._task)
        return self._task_words

    def holds_term(self, tokens: list[str]) -> bool:
        lowered = self._strings()
        if not any(t in s for t in tokens for s in lowered):
            return False
        return self._evidence().holds_term(tokens)

    def holds_value(self, lowered: str) -> bool:
        return bool(_CJK.search(lowered)) and self._evidence().holds_value(lowered)

    def _strings(self) -> list[str]:
        if self._lowered is None:
            self._lowered = lowered_strings(self._results)
        return self._lowered

    def _evidence(self) -> TurnEvidence:
        if self._full is None:
            self._full = TurnEvidence.from_lowered(self._strings(), self.task)
        return self._full


def _strings(value: Any, out: list[str], budget: int) -> int:
    """Append the string (and number) values inside `value` (not the object keys); the budget left."""
    stack = [value]
    while stack and budget > 0:
        item = stack.pop()
        kind = item.__class__  # JSON's exact classes first, without a call (the general test below)
        if kind is dict:
            stack.extend(item.values())
            continue
        if kind is list:
            stack.extend(item)
            continue
        if kind is str:
            out.append(item[:budget])
            budget -= len(item)
            continue
        if isinstance(item, str):
            out.append(item[:budget])
            budget -= len(item)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, (int, float)):
            out.append(str(item))
            budget -= 8
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return budget


@dataclass(frozen=True)
class FillerVerdict:
    kind: str  # promise | acknowledgement | self-narration
    text: str


NO_EVIDENCE = TurnEvidence()
Evidence = TurnEvidence | LazyEvidence  # what the judgement asks: `task`, `holds_term`, `holds_value`


def may_be_filler(text: str | None) -> bool:
    """The cheap test before the turn's evidence is gathered: short, not blank, no data."""
    if text is None:
        return False
    body = js_trim(text)
    return bool(body) and len(body) < MAX_CHARS and not _DATA.search(body)


def filler_kind(text: str | None, evidence: Evidence = NO_EVIDENCE) -> FillerVerdict | None:
    """The kind of filler `text` is, or None for a real (or empty, or long) answer."""
    if text is None or not may_be_filler(text):
        return None
    return judge(js_trim(text), evidence)


def judge(body: str, evidence: Evidence) -> FillerVerdict | None:
    """`filler_kind` of a reply `body`, trimmed, that `may_be_filler`."""
    lowered = body.lower().replace("\u2019", "'")
    tokens = words(lowered)
    if tokens and len(tokens) <= 2 and all(t in evidence.task for t in tokens):
        return None  # exactly the reply the task asked for ("reply OK if ...")
    if body.endswith(_COLONS):
        return FillerVerdict("promise", body)
    if _is_acknowledgement(lowered):
        return FillerVerdict("acknowledgement", body)
    if _delivers(lowered, tokens, evidence):
        return None
    start = 0
    while start < len(tokens) - 1 and tokens[start] in OPENERS:
        start += 1
    tokens = tokens[start:]
    # Words the reply shares with its task name the topic; on their own they deliver nothing.
    task = evidence.task
    own = [t for t in tokens if t not in task or t in PROCESS or t in SELF]
    content = [t for t in own if t not in FUNCTION]
    if _cjk_process(lowered) or _process_only(content, own, restates=len(own) < len(tokens)):
        return FillerVerdict("self-narration", body)
    return None


def words(lowered: str) -> list[str]:
    """The word tokens of lower-cased text, French elisions split (`l'analyse` -> `l`, `analyse`)."""
    if "'" not in lowered:
        return _WORD.findall(lowered)  # no token to split (`words_split` is the general path)
    return words_split(lowered)


def words_split(lowered: str) -> list[str]:
    """`words`, splitting every token at its apostrophes where the head is an elision."""
    out: list[str] = []
    for token in _WORD.findall(lowered):
        head, sep, rest = token.partition("'")
        if sep and head in _ELIDED:
            out.append(head)
            out.extend(w for w in rest.split("'") if w)
        else:
            out.append(token)
    return out


def _is_acknowledgement(lowered: str) -> bool:
    pieces = [p.strip(" \t\n.!?\u3002\uff01") for p in re.split(r"[,\u3001\uff0c]", lowered)]
    return bool(pieces) and all(p in ACKNOWLEDGEMENTS for p in pieces if p) and any(pieces)


def _delivers(lowered: str, tokens: list[str], evidence: Evidence) -> bool:
    """A word from the turn's results, an assertion, or one of the turn's (CJK) values."""
    looked_up = []
    for t in tokens:
        if t in ASSERTION:
            return True
        if t not in FUNCTION and t not in PROCESS:
            looked_up.append(t)
    if looked_up and evidence.holds_term(looked_up):
        return True
    if any(a in lowered for a in CJK_ASSERTION):
        return True
    return evidence.holds_value(lowered)


def _cjk_process(lowered: str) -> bool:
    return bool(_CJK.search(lowered)) and any(p in lowered for p in CJK_PROCESS)


def _process_only(content: list[str], tokens: list[str], restates: bool) -> bool:
    """Every content word is process talk, or the reply is led by it (a self-subject with a process
    verb, or a process word first) and carries nothing from the turn. `tokens` leave out the words
    taken from the task; `restates`: some were."""
    if not content:
        return restates
    process = sum(t in PROCESS for t in content)
    if 2 * process >= len(content):  # mostly process talk, and (the caller checked) nothing delivered
        return True
    return _led_by_process(tokens)


def _led_by_process(tokens: list[str]) -> bool:
    lead = [t for t in tokens[:6] if t not in FUNCTION or t in SELF]
    if not lead:
        return False
    if lead[0] in PROCESS:
        return True
    return lead[0] in SELF and any(t in PROCESS for t in lead[1:4])
