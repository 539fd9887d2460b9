"""The client's copies of protocol facts agree with the generated bridge/protocol.schema.json.

Python cannot import the TypeScript definitions (bridge/protocol.ts BINARY_ARRAYS,
env/rules/actions.ts NUM_ACTIONS), so it keeps copies; the schema is generated from those
definitions (and tested to be current on the TypeScript side), so a drift fails here.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from kratzen_bridge.client import BINARY_ARRAYS, NUM_ACTIONS, PROTOCOL_VERSION  # noqa: E402

SCHEMA = os.path.join(HERE, "..", "..", "protocol.schema.json")


class ProtocolCopyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(SCHEMA, encoding="utf-8") as f:
            cls.schema = json.load(f)

    def test_version_and_action_count(self):
        self.assertEqual(PROTOCOL_VERSION, self.schema["protocolVersion"])
        self.assertEqual(NUM_ACTIONS, self.schema["numActions"])

    def test_binary_arrays_in_order_with_their_little_endian_dtypes(self):
        expected = [(a["name"], np.dtype(a["dtype"]).newbyteorder("<")) for a in self.schema["binaryArrays"]]
        ours = [(name, np.dtype(dtype)) for name, dtype in BINARY_ARRAYS]
        self.assertEqual(ours, expected)


if __name__ == "__main__":
    unittest.main()
