"""The knowledge namespace: a small policy knowledge base and glossary."""

from __future__ import annotations

import re

from dtl_notebook.live.demo_tools.fakes import _match_score
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
KB = DATA.kb_articles
GLOSSARY = DATA.glossary


def _kb_search(query: str, limit: int) -> list[str]:
    ranked = sorted(
        (-(2 * _match_score(query, title) + _match_score(query, body, category)), aid)
        for aid, (title, category, body) in KB.items()
    )
    best = -ranked[0][0]
    # title words count double; weak matches (under half the best score) are dropped
    return [aid for score, aid in ranked if score < 0 and -2 * score >= best][:limit]


def _knowledge(tool: _Domain, world: _World) -> None:
    def article(aid: str) -> J:
        key = aid.strip().lower()
        if key not in KB:
            raise ValueError(f"unknown article {aid!r}; ids run from kb_001 to kb_{len(KB):03d}")
        title, category, body = KB[key]
        return {"article_id": key, "title": title, "category": category, "body": body}

    @tool
    def search_knowledge_base(query: str, limit: int = 3) -> J:
        hits = [article(a) for a in _kb_search(query, limit)]
        return {"query": query, "results": [{**a, "body": a["body"][:160]} for a in hits]}

    @tool
    def get_kb_article(article_id: str) -> J:
        return article(article_id)

    @tool
    def list_kb_articles(category: str | None = None) -> J:
        return {
            "articles": [
                {"article_id": a, "title": t, "category": c}
                for a, (t, c, _) in KB.items()
                if category in (None, c)
            ]
        }

    @tool
    def answer_policy_question(question: str) -> J:
        hits = _kb_search(question, 1)
        if not hits:
            return {"question": question, "answer": None, "note": "no matching article"}
        title, _, body = KB[hits[0]]
        sentences = re.split(r"(?<=\.)\s+", body)
        best = max(sentences, key=lambda s: _match_score(question, s))
        return {
            "question": question,
            "answer": best,
            "source": {"article_id": hits[0], "title": title},
        }

    @tool
    def get_related_articles(article_id: str) -> J:
        base = article(article_id)
        ranked = sorted(
            (
                KB[a][1] != base["category"],
                -_match_score(base["title"] + " " + base["body"], KB[a][2]),
                a,
            )
            for a in KB
            if a != base["article_id"]
        )
        hits = [a for *_, a in ranked]
        return {
            "article_id": base["article_id"],
            "related": [{"article_id": a, "title": KB[a][0]} for a in hits[:3]],
        }

    @tool
    def define_glossary_term(term: str) -> J:
        for key, meaning in GLOSSARY.items():
            if key.lower() == term.strip().lower():
                return {"term": key, "definition": meaning}
        raise ValueError(f"{term!r} is not in the glossary; known terms: {', '.join(GLOSSARY)}")
