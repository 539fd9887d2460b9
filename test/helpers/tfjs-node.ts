// Whether @tensorflow/tfjs-node is installed: without it (CI, machines whose install cannot
// download its binary) the `tensorflow` backend cannot load, which some CLI tests expect.
import { createRequire } from 'node:module';

export const HAS_TFJS_NODE = (() => {
  try {
    createRequire(import.meta.url).resolve('@tensorflow/tfjs-node');
    return true;
  } catch {
    return false;
  }
})();
