// The checkpoint store's public surface.
export { CHECKPOINT_ERROR_CODES, CheckpointError, type CheckpointErrorCode } from './errors.js';
export {
  CHECKPOINT_FORMAT_VERSION,
  MANIFEST_FILE,
  MODEL_FILE,
  WEIGHTS_FILE,
  manifestSchema,
  type CheckpointManifest,
  type JsonValue,
} from './manifest.js';
export { modelFromFiles, modelToFiles, type ModelFiles } from './model-files.js';
export {
  loadCheckpoint,
  readManifest,
  writeCheckpoint,
  type CheckpointContent,
  type ExtraBlob,
  type LoadCheckpointOptions,
  type LoadedCheckpoint,
  type RulesInput,
  type WrittenCheckpoint,
} from './checkpoint.js';
export {
  CheckpointStore,
  RUN_STORE_FOLDER,
  checkpointName,
  loadCheckpointOrLatest,
  type CheckpointStoreOptions,
  type CheckpointSummary,
  type PointerName,
  type SaveOptions,
} from './store.js';
export { OutputError } from './durable-fs.js';
export { OPTIMIZER_EXTRA, decodeOptimizerState, encodeOptimizerState, type NamedArray } from './optimizer-state.js';
