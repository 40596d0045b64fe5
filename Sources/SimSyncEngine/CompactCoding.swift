import Foundation

/// A compact, deterministic binary encoding, written field by field in a fixed order: the
/// encoding of ``SyncRecord/encodedSystemFields`` and of the reference apps' rows. An order of
/// magnitude cheaper than `JSONEncoder` (which builds a tree of boxed values and sorts every
/// object's keys), and as deterministic: a dictionary is written in key order.
///
/// Integers are LEB128 varints (zigzag for signed), strings and bytes their length then their
/// UTF-8 or bytes, an optional a 0 or 1 then the value, a list its count then its elements.
struct CompactWriter {
  var bytes: [UInt8] = []

  init(reserving capacity: Int = 64) { bytes.reserveCapacity(capacity) }

  /// The bytes written.
  var data: Data { Data(bytes) }

  mutating func byte(_ b: UInt8) { bytes.append(b) }

  mutating func unsigned(_ n: UInt64) {
    var n = n
    while n >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: n) | 0x80)
      n >>= 7
    }
    bytes.append(UInt8(n))
  }

  mutating func int(_ n: Int64) { unsigned(UInt64(bitPattern: (n << 1) ^ (n >> 63))) }

  mutating func count(_ n: Int) { unsigned(UInt64(n)) }

  mutating func bool(_ b: Bool) { bytes.append(b ? 1 : 0) }

  mutating func string(_ s: String) {
    var s = s
    s.withUTF8 { utf8 in
      count(utf8.count)
      bytes.append(contentsOf: utf8)
    }
  }

  mutating func data(_ d: Data) {
    count(d.count)
    bytes.append(contentsOf: d)
  }

  mutating func optional<T>(_ value: T?, _ write: (inout CompactWriter, T) -> Void) {
    guard let value else { return bytes.append(0) }
    bytes.append(1)
    write(&self, value)
  }

  mutating func list<T>(_ values: [T], _ write: (inout CompactWriter, T) -> Void) {
    count(values.count)
    for v in values { write(&self, v) }
  }

  mutating func strings(_ values: [String]) {
    count(values.count)
    for v in values { string(v) }
  }

  /// A dictionary by string key, in key order.
  mutating func dictionary<T>(_ values: [String: T], _ write: (inout CompactWriter, T) -> Void) {
    count(values.count)
    for (key, value) in values.sorted(by: { $0.key < $1.key }) {
      string(key)
      write(&self, value)
    }
  }

  mutating func zoneID(_ z: SyncRecordZoneID) {
    string(z.zoneName)
    string(z.ownerName)
  }

  mutating func recordID(_ id: SyncRecordID) {
    string(id.recordName)
    zoneID(id.zoneID)
  }

  mutating func value(_ v: SyncValue) {
    switch v {
    case .string(let s):
      byte(0)
      string(s)
    case .int(let n):
      byte(1)
      int(n)
    case .double(let d):
      byte(2)
      unsigned(d.bitPattern)
    case .bool(let b):
      byte(3)
      bool(b)
    case .date(let n):
      byte(4)
      int(n)
    case .data(let d):
      byte(5)
      data(d)
    case .reference(let r):
      byte(6)
      recordID(r.recordID)
      byte(r.action == .none ? 0 : 1)
    case .strings(let s):
      byte(7)
      strings(s)
    case .asset(let a):
      byte(8)
      optional(a.fileURL) { $0.string($1.absoluteString) }
      optional(a.content) { w, c in
        w.string(c.name)
        w.int(c.size)
      }
    }
  }

  mutating func values(_ fields: [String: SyncValue]) { dictionary(fields) { $0.value($1) } }

  mutating func state(_ s: SyncEngine.State.Serialization) {
    list(s.pendingRecordZoneChanges) { w, change in
      switch change {
      case .saveRecord(let id):
        w.byte(0)
        w.recordID(id)
      case .deleteRecord(let id):
        w.byte(1)
        w.recordID(id)
      }
    }
    list(s.pendingDatabaseChanges) { w, change in
      switch change {
      case .saveZone(let zone):
        w.byte(0)
        w.zoneID(zone.zoneID)
      case .deleteZone(let id):
        w.byte(1)
        w.zoneID(id)
      }
    }
    optional(s.changeToken) { $0.int($1) }
    bool(s.hasPendingUntrackedChanges)
  }
}

/// Reads what a ``CompactWriter`` wrote, in the same order; throws on bytes that are not such
/// an encoding.
struct CompactReader {
  struct Malformed: Error {}
  let bytes: [UInt8]
  var at = 0

  init(_ data: Data) { bytes = Array(data) }

  /// Whether every byte was read.
  var atEnd: Bool { at == bytes.count }

  mutating func byte() throws(Malformed) -> UInt8 {
    guard at < bytes.count else { throw Malformed() }
    at += 1
    return bytes[at - 1]
  }

  mutating func unsigned() throws(Malformed) -> UInt64 {
    var n: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let b = try byte()
      guard shift < 64 else { throw Malformed() }
      n |= UInt64(b & 0x7f) << shift
      if b < 0x80 { return n }
      shift += 7
    }
  }

  mutating func int() throws(Malformed) -> Int64 {
    let z = try unsigned()
    return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
  }

  mutating func count() throws(Malformed) -> Int {
    let n = try unsigned()
    guard n <= UInt64(bytes.count - at) else { throw Malformed() }
    return Int(n)
  }

  mutating func bool() throws(Malformed) -> Bool {
    switch try byte() {
    case 0: return false
    case 1: return true
    default: throw Malformed()
    }
  }

  mutating func string() throws(Malformed) -> String {
    let n = try count()
    defer { at += n }
    return String(decoding: bytes[at..<at + n], as: UTF8.self)
  }

  mutating func data() throws(Malformed) -> Data {
    let n = try count()
    defer { at += n }
    return Data(bytes[at..<at + n])
  }

  mutating func optional<T>(_ read: (inout CompactReader) throws(Malformed) -> T) throws(Malformed) -> T? {
    try bool() ? try read(&self) : nil
  }

  mutating func list<T>(_ read: (inout CompactReader) throws(Malformed) -> T) throws(Malformed) -> [T] {
    let n = try count()
    var values: [T] = []
    values.reserveCapacity(n)
    for _ in 0..<n { values.append(try read(&self)) }
    return values
  }

  mutating func strings() throws(Malformed) -> [String] { try list { r throws(Malformed) in try r.string() } }

  mutating func dictionary<T>(_ read: (inout CompactReader) throws(Malformed) -> T) throws(Malformed) -> [String: T] {
    let n = try count()
    var values: [String: T] = [:]
    values.reserveCapacity(n)
    for _ in 0..<n {
      let key = try string()
      values[key] = try read(&self)
    }
    return values
  }

  mutating func zoneID() throws(Malformed) -> SyncRecordZoneID {
    let name = try string()
    return SyncRecordZoneID(zoneName: name, ownerName: try string())
  }

  mutating func recordID() throws(Malformed) -> SyncRecordID {
    let name = try string()
    return SyncRecordID(recordName: name, zoneID: try zoneID())
  }

  mutating func value() throws(Malformed) -> SyncValue {
    switch try byte() {
    case 0: return .string(try string())
    case 1: return .int(try int())
    case 2: return .double(Double(bitPattern: try unsigned()))
    case 3: return .bool(try bool())
    case 4: return .date(try int())
    case 5: return .data(try data())
    case 6:
      let id = try recordID()
      switch try byte() {
      case 0: return .reference(SyncRecord.Reference(recordID: id, action: .none))
      case 1: return .reference(SyncRecord.Reference(recordID: id, action: .deleteSelf))
      default: throw Malformed()
      }
    case 7: return .strings(try strings())
    case 8:
      let url = try optional { r throws(Malformed) -> URL in
        guard let url = URL(string: try r.string()) else { throw Malformed() }
        return url
      }
      let content = try optional { r throws(Malformed) -> AssetContent in
        let name = try r.string()
        return AssetContent(name: name, size: try r.int())
      }
      if let content { return .asset(SyncAsset(fileURL: url, content: content)) }
      guard let url else { throw Malformed() }
      return .asset(SyncAsset(fileURL: url))
    default: throw Malformed()
    }
  }

  mutating func values() throws(Malformed) -> [String: SyncValue] { try dictionary { r throws(Malformed) in try r.value() } }

  mutating func state() throws(Malformed) -> SyncEngine.State.Serialization {
    let records = try list { r throws(Malformed) -> SyncEngine.PendingRecordZoneChange in
      switch try r.byte() {
      case 0: return .saveRecord(try r.recordID())
      case 1: return .deleteRecord(try r.recordID())
      default: throw Malformed()
      }
    }
    let zones = try list { r throws(Malformed) -> SyncEngine.PendingDatabaseChange in
      switch try r.byte() {
      case 0: return .saveZone(SyncRecordZone(zoneID: try r.zoneID()))
      case 1: return .deleteZone(try r.zoneID())
      default: throw Malformed()
      }
    }
    let token = try optional { r throws(Malformed) in try r.int() }
    return SyncEngine.State.Serialization(
      pendingRecordZoneChanges: records, pendingDatabaseChanges: zones, changeToken: token, hasPendingUntrackedChanges: try bool())
  }
}

extension SimDisk.Table {
  /// Puts the row under `key` as `write` encodes it.
  func put(_ key: String, encoding write: (inout CompactWriter) -> Void) {
    var w = CompactWriter()
    write(&w)
    put(key, w.data)
  }

  /// The row under `key` as `read` decodes it, or nil when there is no such row.
  func row<T>(_ key: String, _ read: (inout CompactReader) throws(CompactReader.Malformed) -> T) throws(CompactReader.Malformed) -> T? {
    guard let data = get(key) else { return nil }
    var r = CompactReader(data)
    return try read(&r)
  }
}
