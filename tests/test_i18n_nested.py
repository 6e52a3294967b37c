"""Chapter 9's glued lists: a message joined from translated parts, two at a time."""

from npukit.i18n import MESSAGE_MIME, _spec, _translate, message


def test_a_list_joined_from_messages_is_translated_part_by_part():
    part = message("with {rt}, a ratio of {r:.2f} ({v})", rt="QAIRT", r=0.504, v=message("fits"))
    whole = message("{a}; {b}", a=part, b=message("does not fit"))
    assert whole == "with QAIRT, a ratio of 0.50 (fits); does not fit"
    assert whole._repr_mimebundle_()[MESSAGE_MIME] == _spec(whole)
    zh = {"{a}; {b}": "{a}；{b}", "with {rt}, a ratio of {r:.2f} ({v})": "使用 {rt} 时比值为 {r:.2f}（{v}）",
          "fits": "相符", "does not fit": "不相符"}
    problems = []
    assert _translate(_spec(whole), zh, problems) == "使用 QAIRT 时比值为 0.50（相符）；不相符"
    del zh["fits"]  # an untranslated part leaves the whole sentence English, and is reported
    assert _translate(_spec(whole), zh, problems) is None and problems == [("missing", "fits", "")]
