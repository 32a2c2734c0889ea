// tensorproto.mjs - reads ONNX's TensorProto (onnx.proto) from the bytes of a
// conformance case's input_N.pb / output_N.pb into a Tensor of the package:
// written here from the .proto's field numbers, so that the test data reach
// the wasm module through the same JS API an app uses, independently of the
// library's own reader.
import { Tensor, arrayClass, typeName } from '../src/tensor.mjs';

// A protobuf reader over one message's bytes.
class Reader {
  constructor(u8, pos = 0, end = u8.length) {
    this.u8 = u8;
    this.pos = pos;
    this.end = end;
  }

  more() {
    return this.pos < this.end;
  }

  varint() {
    // as BigInt: int64 fields need all 64 bits
    let shift = 0n;
    let v = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new Error('TensorProto: truncated varint');
      const b = this.u8[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
      if (shift > 63n) throw new Error('TensorProto: varint too long');
    }
  }

  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.end) throw new Error('TensorProto: truncated field');
    const b = this.u8.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`TensorProto: wire type ${wire} not supported`);
  }
}

// Repeated numeric field: packed (wire 2) or one value per tag.
function repeated(r, wire, fixed, out, read) {
  if (wire === 2) {
    const b = r.bytes();
    const sub = new Reader(b);
    if (fixed) {
      const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (let o = 0; o + fixed <= b.length; o += fixed) out.push(read(dv, o));
    } else {
      while (sub.more()) out.push(sub.varint());
    }
  } else if (fixed) {
    const dv = new DataView(r.u8.buffer, r.u8.byteOffset + r.pos, fixed);
    out.push(read(dv, 0));
    r.pos += fixed;
  } else {
    out.push(r.varint());
  }
}

const f32 = (dv, o) => dv.getFloat32(o, true);
const f64 = (dv, o) => dv.getFloat64(o, true);

// The tensor of a TensorProto message; throws on a message it cannot read
// (external data, an element type the Tensor has no name for).
export function decodeTensorProto(u8) {
  const r = new Reader(u8);
  const dims = [];
  let dtype = 0;
  let raw = null;
  let external = false;
  const floats = [], ints = [], strings = [], int64s = [], doubles = [], uint64s = [];
  while (r.more()) {
    const tag = Number(r.varint());
    const field = tag >>> 3, wire = tag & 7;
    switch (field) {
      case 1: repeated(r, wire, 0, dims); break;
      case 2: dtype = Number(r.varint()); break;
      case 4: repeated(r, wire, 4, floats, f32); break;
      case 5: repeated(r, wire, 0, ints); break;
      case 6: strings.push(r.bytes()); break;
      case 7: repeated(r, wire, 0, int64s); break;
      case 9: raw = r.bytes(); break;
      case 10: repeated(r, wire, 8, doubles, f64); break;
      case 11: repeated(r, wire, 0, uint64s); break;
      case 14: external = Number(r.varint()) === 1; break;
      default: r.skip(wire);
    }
  }
  if (external) throw new Error('TensorProto with external data');
  const type = typeName(dtype);
  if (!type) throw new Error(`TensorProto element type ${dtype} has no Tensor type`);
  const shape = dims.map((d) => Number(BigInt.asIntN(64, d)));
  const n = shape.reduce((a, b) => a * b, 1);
  if (type === 'string') {
    const dec = new TextDecoder();
    return new Tensor('string', strings.map((s) => dec.decode(s)), shape);
  }
  const cls = arrayClass(type);
  let data;
  const bits = { int4: 4, uint4: 4, float4e2m1: 4, int2: 2, uint2: 2 }[type];
  if (bits && !raw) raw = Uint8Array.from(ints, (v) => Number(v) & 255); // packed bytes in int32_data
  if (raw) {
    if (bits) {
      // 8/bits elements per byte, lowest bits first; signed ones sign-extended
      data = new cls(n);
      const per = 8 / bits, mask = (1 << bits) - 1;
      for (let i = 0; i < n; i++) {
        const v = (raw[Math.floor(i / per)] >> ((i % per) * bits)) & mask;
        data[i] = (type === 'int4' || type === 'int2') && v >= (1 << (bits - 1)) ? v - (1 << bits) : v;
      }
    } else {
      // copy (raw may be unaligned for the element size; and a node Buffer's
      // slice() is a view, not a copy)
      const copy = new Uint8Array(raw);
      data = new cls(copy.buffer, 0, copy.byteLength / cls.BYTES_PER_ELEMENT);
    }
  } else {
    data = new cls(n);
    const src = type === 'float32' ? floats : type === 'float64' ? doubles :
      type === 'int64' ? int64s : type === 'uint32' || type === 'uint64' ? uint64s : ints;
    for (let i = 0; i < n; i++) {
      const v = src[i];
      if (v === undefined) throw new Error(`TensorProto holds fewer than ${n} elements`);
      if (cls === BigInt64Array) data[i] = BigInt.asIntN(64, v);
      else if (cls === BigUint64Array) data[i] = BigInt.asUintN(64, v);
      else if (typeof v === 'bigint') data[i] = Number(BigInt.asIntN(32, v));
      else data[i] = v;
    }
  }
  return new Tensor(type, data, shape);
}
