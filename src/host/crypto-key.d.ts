// Node's types declare the global CryptoKey as a value only; its type is node:crypto's
// webcrypto.CryptoKey. The host's project has no DOM, so this names that type where DOM used to.
type CryptoKey = import('node:crypto').webcrypto.CryptoKey;
