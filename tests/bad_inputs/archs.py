"""Bad inputs for npukit.archs."""

from badinput import bad

from npukit import archs

CASES = [
    bad(archs.build, "resnet34", names="name"),
    bad(archs.build, 18, exc=TypeError, names="name"),
    bad(archs.build, "resnet18", weights="zeros", names="weights"),
    bad(archs.build, "resnet18", weights=None, exc=TypeError, names="weights"),
    bad(archs.build, "resnet18", seed=-1, names="seed"),
    bad(archs.build, "resnet18", seed=True, exc=TypeError, names="seed"),
    bad(archs.build, "convnext_tiny", weights="random", names="weights='random'"),
    bad(archs.parameter_count, "resnet18", exc=TypeError, names="model"),
    bad(archs.input_shapes, "unet", names="name"),
    bad(archs.input_shapes, None, exc=TypeError, names="name"),
]
