"""Bad inputs for npukit.contract."""

import numpy as np
from badinput import bad

from npukit import contract
from npukit.models import CameraNet

_model = CameraNet.pretrained().to_onnx()

CASES = [
    bad(contract.supported_ops, _model, 3, exc=TypeError, names="device"),
    bad(contract.supported_ops, _model, "NPU", names="device 'NPU' is not on this machine"),
    bad(contract.NPUProfile.from_dict, {"name": "x"}, names="'ops'"),
    bad(contract.NPUProfile.from_dict, [1], exc=TypeError, names="d must be a mapping"),
    bad(contract.NPUProfile.from_dict, {"name": "x", "ops": ["Conv"], "max_rank": 0}, names="d['max_rank']"),
    bad(contract.ILLUSTRATIVE_NPU.without, 3, exc=TypeError, names="ops[0]"),
    bad(contract.check_contract, "model.onnx", exc=TypeError, names="model"),
    bad(contract.check_contract, _model, {"ops": []}, exc=TypeError, names="profile"),
    bad(contract.partition, b"bytes", exc=TypeError, names="model"),
    bad(contract.partition, _model, "NPU", exc=TypeError, names="profile"),
    bad(contract.host_alignment, 0, names="samples"),
    bad(contract.host_alignment, 10, 0, names="nbytes"),
    bad(contract.groupnorm_model, 10, 3, names="groups"),
    bad(contract.groupnorm_model, 0, names="channels"),
    bad(contract.decompose_groupnorm, None, exc=TypeError, names="model"),
    bad(contract.split_model, _model, ["nope"], names="cuts[0]"),
    bad(contract.split_model, _model, "stem.relu", exc=TypeError, names="cuts"),
    bad(contract.ort_quantize_qdq, _model, np.zeros((4, 3, 16, 16), np.float32), names="calibration"),
    bad(contract.ort_quantize_qdq, _model, [1], exc=TypeError, names="calibration"),
    bad(contract.ort_quantize_qdq, _model, np.zeros((4, 3, 32, 32), np.float32), per_channel=1, exc=TypeError,
        names="per_channel"),
    bad(contract.ort_session, _model, "max", names="level"),
    bad(contract.ort_session, _model, threads=0, names="threads"),
]
