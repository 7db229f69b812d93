"""What the generators of this directory's f32 test modules share: random weights written as
resource blobs (`Weights.constant`, then `Weights.resources()` after the function) and tensor
type spelling (`t`)."""
import numpy as np


def t(*shape):
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


class Weights:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.blobs = {}

    def constant(self, name, shape, scale):
        """A kiln.constant of normal values times `scale`, held as blob `name`."""
        self.blobs[name] = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return f"kiln.constant dense_resource<{name}> : tensor<{'x'.join(map(str, shape))}xf32>"

    def resources(self):
        """The module's dialect_resources section holding every blob (little-endian f32)."""
        lines = ",\n".join(f'      {name}: "0x04000000{value.tobytes().hex().upper()}"'
                           for name, value in self.blobs.items())
        return "{-#\n  dialect_resources: {\n    builtin: {\n" + lines + "\n    }\n  }\n#-}"
