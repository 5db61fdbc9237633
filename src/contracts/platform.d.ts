// The few web-platform APIs contracts uses, which browsers, Node and Workers all provide (signing-core.ts:
// UTF-8, base64, Web Crypto's digest, import, sign and verify). Contracts' own project has no DOM and no
// Node types, so this is the whole of what it may use; every other project checks these same files
// against its runtime's real declarations.
interface CryptoKey {
  readonly type: string;
  readonly extractable: boolean;
  readonly algorithm: object;
  readonly usages: string[];
}

interface SubtleCrypto {
  digest(algorithm: string | object, data: Uint8Array<ArrayBuffer>): Promise<ArrayBuffer>;
  importKey(format: 'jwk', keyData: object, algorithm: string | object, extractable: boolean, keyUsages: string[]): Promise<CryptoKey>;
  sign(algorithm: string | object, key: CryptoKey, data: Uint8Array<ArrayBuffer>): Promise<ArrayBuffer>;
  verify(algorithm: string | object, key: CryptoKey, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean>;
}

declare var crypto: { readonly subtle: SubtleCrypto };

declare class TextEncoder {
  encode(input?: string): Uint8Array<ArrayBuffer>;
}

declare function atob(data: string): string;
declare function btoa(data: string): string;
