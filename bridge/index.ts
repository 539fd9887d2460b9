// The bridge's public surface: the protocol, its error codes, the server and a TypeScript client.
export * from './protocol.js';
export * from './errors.js';
export { BridgeServer, startBridgeServer, CLOSE_IDLE, type BridgeServerOptions } from './server.js';
export { BridgeClient, BridgeRequestError, type RawReply } from './client.js';
export { decodeBinaryFrame, denseFromCsr, type BatchView, type DecodedArrays, type Encoding } from './codec.js';
export { protocolJsonSchema } from './schema.js';
