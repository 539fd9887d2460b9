// The typed error of the checkpoint store: every way a checkpoint can be refused has a code, so
// callers (trainer, CLI, bridge) can react to it rather than parse a message.

export const CHECKPOINT_ERROR_CODES = {
  /** A file the checkpoint needs (manifest, model, weights, an extra, a pointer target) is absent. */
  'missing-file': 'missing file',
  /** manifest.json is not JSON or does not match the manifest schema. */
  'bad-manifest': 'bad manifest',
  /** A file of the checkpoint is a symbolic link, not a regular file, or cannot be read (it was a `bad manifest`, also for weights.bin). */
  'bad-file': 'bad file',
  /** A file's size or sha256 differs from the manifest, or the manifest from its pointer. */
  'hash-mismatch': 'hash mismatch',
  /** The checkpoint was trained for another (normalized) rule set. */
  'incompatible-rules': 'incompatible rules',
  /** Another observation version or size. */
  'incompatible-obs': 'incompatible observation',
  /** Another action count. */
  'incompatible-actions': 'incompatible action count',
  /** model.json / weights.bin are not a loadable policy model. */
  'bad-model': 'bad model',
  /** A `latest` / `best` pointer file is not valid. */
  'bad-pointer': 'bad pointer',
  /** A checkpoint of that name exists already (checkpoints are immutable). */
  'already-exists': 'already exists',
  /** The policy network is larger than the loader accepts (a server's --max-model-bytes). */
  'too-large': 'too large',
  /** A name or argument that the store does not accept. */
  'invalid-argument': 'invalid argument',
} as const;

export type CheckpointErrorCode = keyof typeof CHECKPOINT_ERROR_CODES;

export class CheckpointError extends Error {
  constructor(
    readonly code: CheckpointErrorCode,
    /** The checkpoint directory or file concerned. */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`checkpoint ${CHECKPOINT_ERROR_CODES[code]}: ${path}: ${reason}`);
    this.name = 'CheckpointError';
  }
}
