"""What a chat message asks for (serving.intent): misspelt questions and refusals of code are
answered in prose; requests, however politely or oddly worded, stay Vox code requests."""

from __future__ import annotations

import pytest

from serving.intent import is_question, is_question_word, is_vox_request, refuses_code


@pytest.mark.parametrize("question", [
    # a probe's misspelt question words: each was checked as a code request
    "Whats an actor in Vox?", "wat is a workflow in vox?", "Hows does match work in Vox?",
    # one letter slipped, with or without a contraction
    "whts a workflow in vox", "Wht is a workflow in Vox?", "Waht is an actor in Vox?", "whta is a vox type",
    "Hw does match work in Vox?", "Hwo does a Vox workflow call an activity?", "wich type does a Vox workflow return?",
    "whn does a Vox actor run its handler?", "Wher is the type of a Vox actor declared?", "Wy does Vox use `ret`?",
    "Hi! Wht is an actor in Vox?", "In Vox, wat is a workflow?",
])
def test_misspelt_questions_ask_for_no_vox_code(question: str) -> None:
    assert not is_vox_request(question)
    assert is_question(question)


@pytest.mark.parametrize("refusal", [
    "What is an actor in Vox? Don't write any code.", "Explain Vox actors, no code please",
    "Explain how Vox functions work without writing any code", "What is a Vox actor? No code is needed.",
    "What's a Vox workflow? I don't need to see code.", "Describe Vox routes, skip the code",
    "How does a Vox workflow work? No code required.", "Tell me what a Vox type is, without any code",
])
def test_a_question_that_refuses_code_asks_for_no_vox_code(refusal: str) -> None:
    assert refuses_code(refusal)
    assert not is_vox_request(refusal)


@pytest.mark.parametrize("ask", [
    # a first word one letter from a question word, but a word of its own
    "Hot path in Vox: a function that sums a list", "Whew, a Vox actor that counts clicks",
    "Way faster Vox function `total(xs: List[int]) to int` please",
    # misspelt question words before a request for code
    "Wht would a Vox actor for a counter look like?", "Hw do I write a Vox workflow?",
    "whts wrong with my Vox function? fn f(x: int) -> int { ret x }",
    # a refusal of something else than code
    "Write a Vox function that sums a list, no code comments", "Write a Vox actor without writing any comments",
])
def test_requests_stay_requests(ask: str) -> None:
    assert is_vox_request(ask)


@pytest.mark.parametrize(("word", "question"), [
    ("what", True), ("What's", True), ("whats", True), ("what\u2019s", True), ("doesnt", True), ("cant", True),
    ("wat", True), ("wht", True), ("whts", True), ("waht", True), ("hw", True), ("hows", True), ("hwo", True),
    ("wich", True), ("wher", True), ("whn", True), ("wy", True),
    ("dont", False), ("now", False), ("new", False), ("way", False), ("hot", False), ("whey", False),
    ("whew", False), ("wow", False), ("write", False), ("here", False), ("the", False), ("", False),
])
def test_is_question_word(word: str, question: bool) -> None:
    assert is_question_word(word) is question
