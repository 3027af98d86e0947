"""Sentence material for the synthetic dialogues: topics, templates, backchannels.

Every inter-pausal unit (IPU) is one clause built from a template and topic vocabulary, so
that many seeds give different conversations. Clause-final punctuation carries the
prosodic cue eSpeak renders: ',' (continuation, turn-internal), '.' (statement, turn-final
fall) and '?' (question, turn-final rise).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


Token = tuple[str, str]
"""(transcript word, spoken text). The spoken text may carry punctuation."""

BACKCHANNELS: tuple[tuple[str, str], ...] = (
    ("uh-huh", "uh-huh"),
    ("yeah", "yeah"),
    ("right", "right"),
    ("mhm", "mm-hmm"),
    ("okay", "okay"),
    ("i see", "I see"),
    ("oh really", "oh really"),
    ("that's right", "that's right"),
    ("oh okay", "oh okay"),
    ("yeah yeah", "yeah yeah"),
    ("uh-huh", "uh-huh"),
    ("yeah", "yeah"),
)
"""Listener backchannels: transcript (Switchboard-style spelling) and the text eSpeak speaks.

Repeated entries make the common ones more frequent, as in Switchboard."""

INTERRUPTION_OPENERS: tuple[str, ...] = (
    "wait,", "hold on,", "sorry but", "actually,", "no no,", "but hang on,", "can I just say,",
    "well but", "oh wait,", "sorry to cut in,", "but listen,", "hmm no,",
)
"""How an interrupter starts; followed by a clause when it takes the floor."""

BUTT_IN_TAILS: tuple[str, ...] = (
    "what about the", "did you mean the", "I thought that", "was that the", "but the other",
    "is that the", "not the", "and the second",
)
"""Short fragments an interrupter gives up on when the speaker keeps the floor."""

ANSWER_OPENERS: tuple[str, ...] = (
    "well", "yes", "no", "hmm", "honestly", "I think", "oh yes", "not really", "I guess", "sure,", "well actually",
    "good question,", "to be honest", "yes definitely", "oh no",
)
CONTINUERS: tuple[str, ...] = (
    "and", "but", "so", "because", "and then", "and also", "although", "which means", "and honestly", "but still",
    "and anyway", "so basically",
)
ASSISTANT_OPENERS: tuple[str, ...] = (
    "sure,", "great question,", "here is what I found,", "I can help with that,", "of course,", "certainly,",
    "good idea,", "let me explain,", "happy to help,",
)

TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "travel": {
        "place": ("Lisbon", "the mountains", "the coast", "Chicago", "a small village", "the lake", "Tokyo", "the desert"),
        "thing": ("the train", "the hotel", "the flight", "the old bridge", "the market", "the museum", "the beach"),
        "act": ("hiking", "taking photos", "walking around", "driving", "swimming", "camping"),
        "adj": ("crowded", "beautiful", "expensive", "quiet", "windy", "amazing", "tiring"),
    },
    "cooking": {
        "place": ("the kitchen", "my aunt's house", "the new cafe", "the farmers market", "the bakery"),
        "thing": ("the soup", "fresh bread", "the curry", "a lemon cake", "the pasta", "roasted vegetables", "the sauce"),
        "act": ("baking", "chopping onions", "grilling", "making dumplings", "trying recipes"),
        "adj": ("spicy", "delicious", "salty", "simple", "messy", "perfect", "burnt"),
    },
    "work": {
        "place": ("the office", "the warehouse", "the meeting room", "the new branch", "home"),
        "thing": ("the report", "the deadline", "my manager", "the project", "the budget", "the new system"),
        "act": ("planning", "writing emails", "fixing bugs", "training people", "answering calls"),
        "adj": ("stressful", "boring", "busy", "fine", "chaotic", "productive", "slow"),
    },
    "movies": {
        "place": ("the cinema", "the festival", "my friend's place", "the old theater"),
        "thing": ("the ending", "that new thriller", "the soundtrack", "the main actor", "the sequel", "the plot"),
        "act": ("watching documentaries", "reading reviews", "binge watching", "going to premieres"),
        "adj": ("funny", "confusing", "long", "brilliant", "predictable", "scary", "moving"),
    },
    "sports": {
        "place": ("the stadium", "the gym", "the park", "the pool", "the tennis court"),
        "thing": ("the game", "the final score", "our team", "the coach", "the new season", "the match"),
        "act": ("running", "cycling", "playing football", "lifting weights", "skiing", "rowing"),
        "adj": ("exciting", "close", "exhausting", "disappointing", "fast", "rough"),
    },
    "pets": {
        "place": ("the vet", "the dog park", "the shelter", "the backyard", "the pet shop"),
        "thing": ("the puppy", "my old cat", "the parrot", "the fish tank", "the new leash", "the kitten"),
        "act": ("walking the dog", "feeding the cat", "training tricks", "brushing fur"),
        "adj": ("lazy", "playful", "noisy", "cute", "stubborn", "gentle"),
    },
    "music": {
        "place": ("the concert hall", "a tiny bar", "the record store", "the music school"),
        "thing": ("the new album", "that guitar solo", "the drummer", "the piano", "the band", "the choir"),
        "act": ("practicing scales", "playing guitar", "singing", "writing songs", "listening to jazz"),
        "adj": ("loud", "catchy", "beautiful", "weird", "mellow", "energetic"),
    },
    "weather": {
        "place": ("the north", "our town", "the valley", "the city", "the island"),
        "thing": ("the storm", "the snow", "the heat wave", "the forecast", "the rain", "the fog"),
        "act": ("shoveling snow", "staying inside", "sitting outside", "gardening"),
        "adj": ("freezing", "humid", "mild", "terrible", "sunny", "gray"),
    },
    "school": {
        "place": ("the library", "the campus", "the lecture hall", "the lab", "the cafeteria"),
        "thing": ("the exam", "the teacher", "my thesis", "the homework", "the new course", "the group project"),
        "act": ("studying", "taking notes", "reading papers", "preparing slides", "tutoring"),
        "adj": ("hard", "interesting", "useless", "long", "fair", "demanding"),
    },
    "home": {
        "place": ("the garage", "the living room", "the garden", "the attic", "the basement"),
        "thing": ("the roof", "the new couch", "the heating", "the neighbors", "the rent", "the old fridge"),
        "act": ("painting walls", "cleaning up", "fixing the sink", "moving boxes", "planting tomatoes"),
        "adj": ("cozy", "small", "drafty", "noisy", "bright", "cheap"),
    },
}

TIMES: tuple[str, ...] = (
    "last weekend", "yesterday", "this morning", "a few years ago", "last summer", "on Monday", "every day",
    "twice a week", "back in college", "recently", "last night", "all the time", "once a month",
)
PEOPLE: tuple[str, ...] = (
    "my brother", "my sister", "a friend of mine", "my neighbor", "my parents", "my cousin", "my roommate",
    "a coworker", "my wife", "my husband", "my kids", "my grandmother",
)
FEELINGS: tuple[str, ...] = (
    "really liked", "did not like", "was surprised by", "kept thinking about", "was annoyed by", "loved",
    "got tired of", "was impressed by", "almost forgot", "could not believe",
)
DEGREES: tuple[str, ...] = ("really", "pretty", "kind of", "so", "very", "a bit", "totally", "quite")

STATEMENTS: tuple[str, ...] = (
    "I went to {place} {time}",
    "{person} told me about {thing}",
    "I {feeling} {thing}",
    "{thing} was {degree} {adj}",
    "we spent {time} {act}",
    "I have been {act} {time}",
    "{person} and I were at {place}",
    "it was {degree} {adj} at {place}",
    "I remember {thing} being {adj}",
    "{person} {feeling} {thing}",
    "the thing about {thing} is that it gets {adj}",
    "I usually go {act} with {person}",
    "{time} I tried {act} for the first time",
    "{person} thinks {thing} is {adj}",
    "there was this {adj} moment at {place}",
    "I never expected {thing} to be so {adj}",
    "we ended up at {place} {time}",
    "{act} is {degree} {adj} if you ask me",
    "I keep telling {person} about {thing}",
    "honestly {thing} was the best part",
    "I would not go back to {place}",
    "{person} wants to try {act} {time}",
)
QUESTIONS: tuple[str, ...] = (
    "have you ever been to {place}",
    "what did you think about {thing}",
    "do you like {act}",
    "was {thing} {adj} for you",
    "did {person} enjoy {thing}",
    "how often do you go {act}",
    "would you go back to {place}",
    "what do you usually do {time}",
    "do you think {thing} is {adj}",
    "is {place} still {adj}",
    "have you tried {act}",
    "who told you about {thing}",
)
ASSISTANT_STATEMENTS: tuple[str, ...] = (
    "many people find {thing} {degree} {adj}",
    "you could try {act} at {place}",
    "a good option is {place} {time}",
    "{thing} is usually {adj} this time of year",
    "I would recommend {act} with {person}",
    "one tip is to plan {thing} in advance",
    "it depends on how {adj} you want it to be",
    "the best time for {act} is {time}",
)

_SLOT = re.compile(r"\{(\w+)\}")


@dataclass
class Clause:
    """One IPU's words and the punctuation that ends it."""

    tokens: list[Token]
    punct: str  # ',', '.' or '?'

    @property
    def text(self) -> str:
        return " ".join(word for word, _ in self.tokens)


def _choice(rng: np.random.Generator, options) -> str:
    return options[int(rng.integers(len(options)))]


class SentenceMaker:
    """Draws clauses about one topic (changing topic now and then) from a seeded generator."""

    def __init__(self, rng: np.random.Generator, topic: str | None = None) -> None:
        self.rng = rng
        self.topic = topic or _choice(rng, sorted(TOPICS))

    def maybe_change_topic(self, probability: float = 0.1) -> None:
        if self.rng.random() < probability:
            self.topic = _choice(self.rng, sorted(TOPICS))

    def _fill(self, template: str) -> str:
        vocab = TOPICS[self.topic]
        generic = {"time": TIMES, "person": PEOPLE, "feeling": FEELINGS, "degree": DEGREES}
        return _SLOT.sub(lambda m: _choice(self.rng, vocab.get(m.group(1)) or generic[m.group(1)]), template)

    def clause(self, kind: str, punct: str, *, opener: str | None = None, register: str = "human") -> Clause:
        """A clause of ``kind`` ("statement", "question", "continuation"), ending in ``punct``."""
        if kind == "question":
            body = self._fill(_choice(self.rng, QUESTIONS))
        else:
            pool = ASSISTANT_STATEMENTS if register == "assistant" and self.rng.random() < 0.6 else STATEMENTS
            body = self._fill(_choice(self.rng, pool))
            if kind == "continuation":
                body = f"{_choice(self.rng, CONTINUERS)} {body}"
        if opener:
            body = f"{opener} {body}"
        return Clause(tokens=text_to_tokens(body, punct), punct=punct)

    def answer_opener(self, register: str = "human") -> str:
        return _choice(self.rng, ASSISTANT_OPENERS if register == "assistant" else ANSWER_OPENERS)

    def backchannel(self) -> Clause:
        transcript, spoken = BACKCHANNELS[int(self.rng.integers(len(BACKCHANNELS)))]
        words, says = transcript.split(), spoken.split()
        # Multi-word backchannels are spoken word for word; the transcript keeps its spelling.
        tokens = list(zip(words, says)) if len(words) == len(says) else [(transcript, spoken)]
        return Clause(tokens=_punctuate(tokens, "."), punct=".")

    def butt_in(self) -> Clause:
        text = f"{_choice(self.rng, INTERRUPTION_OPENERS)} {_choice(self.rng, BUTT_IN_TAILS)}"
        return Clause(tokens=text_to_tokens(text, ","), punct=",")

    def interruption_opener(self) -> str:
        return _choice(self.rng, INTERRUPTION_OPENERS)


def text_to_tokens(text: str, punct: str) -> list[Token]:
    """Split a clause into (transcript, spoken) tokens and put ``punct`` on the last one.

    Transcript words are lower case without punctuation; inner commas stay in the spoken
    text so eSpeak phrases them.
    """
    tokens = []
    for raw in text.split():
        word = raw.strip(",.?!").lower()
        if word:
            tokens.append((word, raw))
    return _punctuate(tokens, punct)


def _punctuate(tokens: list[Token], punct: str) -> list[Token]:
    word, spoken = tokens[-1]
    return tokens[:-1] + [(word, spoken.rstrip(",.?!") + punct)]
