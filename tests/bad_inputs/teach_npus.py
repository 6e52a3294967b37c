"""Bad inputs for npukit.teach.npus (the lab's checkers, not the learner's functions)."""

from badinput import bad

from npukit.teach import npus as t


def _todo(*args):
    raise NotImplementedError()


CASES = [
    bad(t.check_compulsory_bytes, 3, exc=TypeError, names="learner must be callable"),
    bad(t.check_roofline_seconds, None, exc=TypeError, names="learner must be callable"),
    bad(t.check_seconds_per_image, "f", exc=TypeError, names="learner must be callable"),
    bad(t.check_npu_prediction, _todo, _todo, tolerance=1.0, names="tolerance"),
    bad(t.check_npu_prediction, _todo, _todo, tolerance="2", exc=TypeError, names="tolerance"),
    bad(t.check_npu_prediction, _todo, 0.2, exc=TypeError, names="efficiency_from"),
    bad(t.check_npu_prediction, _todo, _todo, target="resnet50", exc=TypeError, names="target"),
    bad(t.check_npu_prediction, _todo, _todo, target=("resnet50", "Pixel 9", "w8a8"), names="target"),
    bad(t.check_npu_prediction, _todo, _todo, target=("stable_diffusion_v1_5/unet", "Snapdragon X Elite CRD", "w8a8"),
        names="target"),
]
