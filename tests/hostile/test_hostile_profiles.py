"""The profile table: a model reaching for sign-ins the person did not give its agent.

A named profile holds the person's sign-ins; which ones an agent gets is the person's choice (its
configured ``profile`` and ``allowed_profiles``), and making a profile is the person's act
(``webhand profile login``). Each row is one attempt by the model, through browser_session_create,
and the words its refusal must say. A row passes when it is refused, no folder was made and no
session was started; after the table, the allowed profile opens once the person made it.
"""

from __future__ import annotations


import pytest

from helpers import ok, settings_for_tests
from webhand import Webhand
from webhand.session.profiles import profile_dir

_NOT_GIVEN = ["is not one this agent may use (it may use: 'work-crm', 'shared')", "allowed_profiles"]

#: (attempt, browser_session_create's arguments, words the refusal says)
ROWS = [
    ("the person's own profile, in a named session", {"name": "mine", "profile": "personal"}, _NOT_GIVEN),
    ("the person's own profile, as the default session", {"profile": "personal"}, _NOT_GIVEN),
    ("a new profile (it would make the folder)", {"name": "fresh", "profile": "brand-new"}, _NOT_GIVEN),
    ("a name differing only in case", {"name": "case", "profile": "Work-CRM"}, _NOT_GIVEN),
    ("an allowed profile the person has not made", {"name": "team", "profile": "shared"},
     ["does not exist yet", "`webhand profile login shared`"]),
    ("a path instead of a name", {"name": "path", "profile": "../profiles/personal"}, ["is not valid"]),
]


@pytest.mark.one_driver("which profile a tool may name is decided above the driver, before any launch")
async def test_the_model_opens_only_the_profiles_the_person_gave_its_agent(driver, data_home, tmp_path_factory):
    profile_dir("personal")  # the person's own, signed in to their mail
    settings = settings_for_tests(tmp_path_factory, driver=driver, isolation="process", warm_reserve=False,
                                  profile="work-crm", allowed_profiles=["shared"])
    profiles = data_home / "webhand" / "profiles"
    async with Webhand(settings) as webhand:
        agent = webhand.conversation("agent")
        failures = []
        for attempt, args, words in ROWS:
            reply = await agent.call("browser_session_create", args)
            missing = [w for w in words if w not in reply.text]
            if not reply.is_error or missing:
                failures.append(f"{attempt}: missing {missing} in {reply.text[:300]!r}")
        assert not failures, "\n".join(failures)
        assert sorted(p.name for p in profiles.iterdir()) == ["personal"], "a refused profile made a folder"
        assert not webhand.sessions.list(), "a refused profile started a session"
        profile_dir("shared")  # the person made it (`webhand profile login shared`)
        assert "on profile 'shared'" in ok(await agent.call("browser_session_create", {"name": "team",
                                                                                       "profile": "shared"}))
