"""Small scripts that run in the page for element and tab actions, the same for every driver."""

from webhand.engine.js import compose, source
from webhand.engine.settle import WATCH_DOM

# What a select offers, and which of the wanted values or labels it lacks.
OPTIONS = source("options.js")

# Can `fill` type into it (then it is focused and its text selected: typing replaces it), or does it
# take its value directly (date, color, range …: then it is set here)? `this` is the element. One
# call: visible, enabled and editable are all a fill needs (no stable box, no pointer), as
# Playwright's fill checks; focusing brings the field into view. It first starts counting the
# document's mutations, so that the reply knows whether typing changed anything but the field.
FILL_PREPARE = compose("fill_prepare.js", WATCH_DOM=WATCH_DOM)

# Selects the options whose value or label is wanted (``this`` is the select); their labels.
SELECT = source("select.js")

# Whether a checkbox or radio (native or ARIA) is checked; ``error`` when it is neither.
CHECKED = source("checked.js")

# The kind of form field, so one call can fill fields of different kinds.
KIND = source("field_kind.js")

# What a text field holds (value, or an editable element's text), and whether it is a password
# field, whose text a reply never quotes; null for an element that holds no text.
FIELD_TEXT = source("field_text.js")

# Hides (``on``) or shows again the text of a field webhand typed a secret into: drawn as dots,
# as a password field's is, in every picture of the page (screenshots, video, the live view), while
# its value stays as typed. A custom property marks the fields so masked (MASKED_FIELDS).
MASK_TEXT = source("mask_text.js")

# How many fields of a document webhand masked (MASK_TEXT) still hold text.
MASKED_FIELDS = source("masked_fields.js")

# One storage operation on window.localStorage / sessionStorage; returns every item afterwards.
WEB_STORAGE = source("web_storage.js")

# Scrolls the window by (x, y); returns where it is and the page's size.
SCROLL = source("scroll.js")


# A selector that finds the element on a fresh load: its id, a unique attribute people choose on
# purpose (test ids, names, labels), else the shortest unique :nth-of-type path from the nearest
# ancestor with an id. Ids that look generated (digits runs, colons) change between loads.
STABLE_SELECTOR = source("stable_selector.js")

# The stable selector of the element a ref names, in one round trip ("" when the ref is gone).
SELECTOR_OF_REF = ("r => { const e = window.__webhand && window.__webhand.resolve(r);"
                   " return e instanceof Element ? (" + STABLE_SELECTOR + ")(e) : ''; }")

# The ways to find the element a ref names on another build of its page (tools/flows/format.py's
# Target, less its frame and point): its role and name, its named ancestors, label, placeholder,
# stable attributes, own text and stable selector; null when the ref is gone.
DESCRIBE = source("describe.js")
DESCRIBE_OF_REF = ("r => { const e = window.__webhand && window.__webhand.resolve(r);"
                   " return e instanceof Element ? (" + DESCRIBE + ")(e, " + STABLE_SELECTOR + ") : null; }")

# What each way of a Target finds in this document: per way, how many elements and their refs.
LOCATE = "t => (" + source("locate.js") + ")(t, " + DESCRIBE + ")"

# The element under a document point (CSS pixels), or its nearest ancestor with a role, described
# as DESCRIBE_OF_REF does, with where the point is in its box (fractions, 0 left/top, 1 right/bottom);
# null when the point is outside the viewport; 'no agent' when the page agent is not in the page yet.
DESCRIBE_AT_POINT = ("([x, y]) => { const W = window.__webhand; if (!W) return 'no agent';"
                     " const vx = x - scrollX, vy = y - scrollY; const hit = document.elementFromPoint(vx, vy);"
                     " if (!hit) return null; let e = hit;"
                     " while (e.parentElement && e !== document.body && !W.label(e).role) e = e.parentElement;"
                     " if (e === document.body || e === document.documentElement) e = hit;"
                     " const b = e.getBoundingClientRect(); if (!(b.width > 0 && b.height > 0)) return null;"
                     " const fraction = (v) => Math.min(1, Math.max(0, v));"
                     " return {...(" + DESCRIBE + ")(e, " + STABLE_SELECTOR + "),"
                     " point: {x: fraction((vx - b.left) / b.width), y: fraction((vy - b.top) / b.height)}}; }")
