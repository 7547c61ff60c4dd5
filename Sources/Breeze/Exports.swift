// What `import Breeze` brings besides its own types (as swift-nio's `Exports.swift` does): the values an app
// reads and writes (events, user state, settings, facts: BreezeCore), the read model of every screen
// (BreezeProjections), the air-quality vocabulary those models use (BreezeAirQuality) and the import
// options and formats (BreezeImport). The log, the wire protocol and the libuv node stay behind `Replica`.
@_exported public import BreezeCore
@_exported public import BreezeAirQuality
@_exported public import BreezeProjections
@_exported public import BreezeImport
// The signing key type an app needs for what it signs itself (a revocation: `Revocation.sign(...signer:)`).
public import BreezeCrypto
/// An Ed25519 key pair and its checks (`Ed25519.KeyPair`, `Ed25519.verify`), as `import Breeze` gives them.
public typealias Ed25519 = BreezeCrypto.Ed25519
