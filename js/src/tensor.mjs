// tensor.mjs - the Tensor of the package, shaped as onnxruntime-web's
// (`new Tensor(type, data, dims)`, `.type`, `.data`, `.dims`, `.size`), and
// the table between its type names, ONNX's element type numbers
// (TensorProto.DataType) and the typed arrays that hold the elements.

// name -> [TensorProto.DataType, typed array class (null: strings)]. Elements
// are held as the C API stores them (onnxc.h "Element storage"): float16 and
// bfloat16 as their 16-bit patterns, bool as 0/1 bytes, 4- and 2-bit kinds one
// element per byte (ort-web packs two per byte: a caller converting from it unpacks).
const TYPES = {
  float32: [1, Float32Array],
  uint8: [2, Uint8Array],
  int8: [3, Int8Array],
  uint16: [4, Uint16Array],
  int16: [5, Int16Array],
  int32: [6, Int32Array],
  int64: [7, BigInt64Array],
  string: [8, null],
  bool: [9, Uint8Array],
  float16: [10, Uint16Array],
  float64: [11, Float64Array],
  uint32: [12, Uint32Array],
  uint64: [13, BigUint64Array],
  bfloat16: [16, Uint16Array],
  float8e4m3fn: [17, Uint8Array],
  float8e4m3fnuz: [18, Uint8Array],
  float8e5m2: [19, Uint8Array],
  float8e5m2fnuz: [20, Uint8Array],
  uint4: [21, Uint8Array],
  int4: [22, Int8Array],
  float4e2m1: [23, Uint8Array],
  float8e8m0: [24, Uint8Array],
  uint2: [25, Uint8Array],
  int2: [26, Int8Array],
};

const BY_CODE = new Map(Object.entries(TYPES).map(([name, [code]]) => [code, name]));

// The element type number of a type name; throws on an unknown name.
export function typeCode(type) {
  const t = TYPES[type];
  if (!t) throw new TypeError(`unknown tensor type '${type}'`);
  return t[0];
}

// The type name of an element type number (undefined for one without a name
// here, e.g. complex64).
export function typeName(code) {
  return BY_CODE.get(code);
}

// The typed array class of a type name (null for strings).
export function arrayClass(type) {
  const t = TYPES[type];
  if (!t) throw new TypeError(`unknown tensor type '${type}'`);
  return t[1];
}

// The type that a typed array implies when no type is given (as ort-web:
// Uint8Array is uint8, not bool).
function inferType(data) {
  if (Array.isArray(data)) {
    if (data.length && typeof data[0] === 'string') return 'string';
    if (data.length && typeof data[0] === 'boolean') return 'bool';
    if (data.length && typeof data[0] === 'bigint') return 'int64';
    return 'float32';
  }
  for (const name of ['float32', 'uint8', 'int8', 'uint16', 'int16', 'int32', 'int64',
    'float64', 'uint32', 'uint64']) {
    if (data instanceof TYPES[name][1]) return name;
  }
  throw new TypeError('cannot tell the tensor type of the data: give the type');
}

// Data as the type's own storage: a typed array of its class (a plain array
// converted, bools as 0/1) or an array of strings.
function toStorage(type, data) {
  const cls = arrayClass(type);
  if (cls === null) {
    if (!Array.isArray(data) || data.some((s) => typeof s !== 'string')) {
      throw new TypeError('a string tensor takes an array of strings');
    }
    return data;
  }
  if (data instanceof cls) return data;
  if (ArrayBuffer.isView(data) && (type === 'bool' || cls.BYTES_PER_ELEMENT === 2)) {
    // bool from any byte array, float16 from a Uint16Array-like view
    return new cls(data.buffer, data.byteOffset, data.byteLength / cls.BYTES_PER_ELEMENT);
  }
  if (Array.isArray(data) || ArrayBuffer.isView(data)) {
    const big = cls === BigInt64Array || cls === BigUint64Array;
    const out = new cls(data.length);
    for (let i = 0; i < data.length; i++) {
      const v = data[i];
      out[i] = big ? BigInt(v) : typeof v === 'boolean' ? Number(v) : Number(v);
    }
    return out;
  }
  throw new TypeError(`tensor data for '${type}' must be an array or a ${cls.name}`);
}

export class Tensor {
  // new Tensor(type, data, dims) or new Tensor(data, dims) (the type from the
  // typed array); dims default to [data.length].
  constructor(a, b, c) {
    let type, data, dims;
    if (typeof a === 'string') [type, data, dims] = [a, b, c];
    else [type, data, dims] = [inferType(a), a, b];
    if (data === undefined || data === null) throw new TypeError('tensor data missing');
    const storage = toStorage(type, data);
    dims = dims === undefined ? [storage.length] : Array.from(dims, Number);
    let size = 1;
    for (const d of dims) {
      if (!Number.isInteger(d) || d < 0) throw new RangeError(`bad tensor dim ${d}`);
      size *= d;
    }
    if (size !== storage.length) {
      throw new RangeError(`tensor data has ${storage.length} elements; dims [${dims}] ask for ${size}`);
    }
    this.type = type;
    this.data = storage;
    this.dims = dims;
    this.size = size;
    this.location = 'cpu';
  }

  // ort-web API: the data (already on the CPU here)
  async getData() {
    return this.data;
  }

  dispose() {
    this.data = null;
  }
}
