"""A glued sentence joined from translated parts: a :func:`npukit.i18n.message` value that is itself a message."""

from npukit.i18n import MESSAGE_MIME, _format_spec, message


def test_a_nested_message_is_translated_with_its_parent():
    part = message("with {rt}, a ratio of {r:.2f} ({v})", rt="QAIRT", r=0.504, v=message("fits"))
    whole = message("{a}; {b}", a=part, b=message("does not fit"))
    assert whole == "with QAIRT, a ratio of 0.50 (fits); does not fit"
    spec = whole._repr_mimebundle_()[MESSAGE_MIME]
    assert spec["args"]["a"]["args"]["v"] == {"template": "fits", "args": {}}
    zh = {"{a}; {b}": "{a}；{b}", "with {rt}, a ratio of {r:.2f} ({v})": "使用 {rt} 时比值为 {r:.2f}（{v}）",
          "fits": "相符", "does not fit": "不相符"}
    lost = []
    assert _format_spec(spec, zh, lost) == "使用 QAIRT 时比值为 0.50（相符）；不相符" and lost == []
    del zh["fits"]  # an untranslated part is reported, and formatted in English
    zh["does not fit"] = "不相符 {x}"  # a translation that changed the fields is reported too
    assert _format_spec(spec, zh, lost) == "使用 QAIRT 时比值为 0.50（fits）；does not fit"
    assert lost == [("fits", ""), ("does not fit", "不相符 {x}")]
