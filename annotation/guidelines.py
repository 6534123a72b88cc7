"""The project's Markdown guidelines as safe HTML: Markdown renders, nh3 keeps only harmless tags."""

from functools import lru_cache

import markdown
import nh3

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "strong",
    "em",
    "b",
    "i",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "del",
    "ins",
    "sub",
    "sup",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}


@lru_cache(maxsize=64)
def render_markdown(text: str) -> str:
    """Sanitised HTML for ``text``; cached, since every item page may ask for the same guidelines."""
    html = markdown.markdown(text or "", extensions=["tables", "sane_lists"], output_format="html")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
