// The plaintext layout of a credential revision: named secret fields, length-prefixed, in name order.
// Binary rather than JSON so that reading a sealed revision back (to keep its untouched fields in a
// rotation) never turns a secret into a JavaScript string, which could not be zeroed afterwards.
//
//   version u8 (1) · count u8 · { nameLength u8 · name (ASCII) · valueLength u32be · value }*

const LAYOUT_VERSION = 1;
const FIELD_NAME = /^[a-z_]{1,64}$/;

/** Encodes fields into one new Buffer. The caller zeroes it (and its own value Buffers). */
export function encodeFields(fields: ReadonlyMap<string, Buffer>): Buffer {
  const names = [...fields.keys()].sort();
  if (names.length > 255) throw new Error("too many secret fields");
  const parts: Buffer[] = [Buffer.from([LAYOUT_VERSION, names.length])];
  for (const name of names) {
    if (!FIELD_NAME.test(name)) throw new Error(`invalid secret field name ${JSON.stringify(name)}`);
    const value = fields.get(name) as Buffer;
    const header = Buffer.alloc(1 + name.length + 4);
    header.writeUInt8(name.length, 0);
    header.write(name, 1, "ascii");
    header.writeUInt32BE(value.length, 1 + name.length);
    parts.push(header, value);
  }
  return Buffer.concat(parts);
}

/**
 * Decodes a layout into views over `plaintext` (no copies): zeroing `plaintext` zeroes them all.
 * A malformed layout can only come from a bug (the envelope already authenticated it), so it throws.
 */
export function decodeFields(plaintext: Buffer): Map<string, Buffer> {
  const fields = new Map<string, Buffer>();
  if (plaintext.length < 2 || plaintext[0] !== LAYOUT_VERSION) throw new Error("unknown secret layout");
  let offset = 2;
  for (let i = 0; i < (plaintext[1] as number); i++) {
    const nameLength = plaintext.readUInt8(offset);
    const name = plaintext.toString("ascii", offset + 1, offset + 1 + nameLength);
    offset += 1 + nameLength;
    const valueLength = plaintext.readUInt32BE(offset);
    offset += 4;
    if (!FIELD_NAME.test(name) || offset + valueLength > plaintext.length) {
      throw new Error("malformed secret layout");
    }
    fields.set(name, plaintext.subarray(offset, offset + valueLength));
    offset += valueLength;
  }
  if (offset !== plaintext.length) throw new Error("malformed secret layout");
  return fields;
}
