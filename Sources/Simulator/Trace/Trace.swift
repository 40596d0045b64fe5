/// A kind of trace record, declared by the module that records it, with the names of its three
/// integer fields for export.
///
///     static let send = TraceKind(code: 3, name: "send", fields: ("msg", "to", "bytes"))
@_spi(Kernel) public struct TraceKind: Sendable, Hashable {
  /// The kind's number, hashed into every record of the kind; kinds with the same code are equal.
  public let code: UInt16
  /// The kind's name in exports (`send`).
  public let name: StaticString
  /// Export names of a record's three integers ``TraceRecord/a``, ``TraceRecord/b`` and
  /// ``TraceRecord/c``; an integer named `-` is left out of exports.
  public let fieldNames: (StaticString, StaticString, StaticString)

  /// A kind with its number, its name, and names for its three integers (default `a`, `b`, `c`).
  public init(code: UInt16, name: StaticString, fields: (StaticString, StaticString, StaticString) = ("a", "b", "c")) {
    self.code = code
    self.name = name
    self.fieldNames = fields
  }

  public static func == (a: TraceKind, b: TraceKind) -> Bool { a.code == b.code }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// One compact trace record: what happened, when, where, and three integers. `detail` is an
/// optional short text for people (a record id, a field name); it is hashed too.
@_spi(Kernel) public struct TraceRecord: Sendable {
  /// When it happened, in simulated time.
  public var time: VirtualTime
  /// What happened.
  public var kind: TraceKind
  /// Where it happened: a node's number, or -1 for the whole world (a settle round).
  public var node: Int32
  /// The first integer; its meaning and export name come from the kind's ``TraceKind/fieldNames``.
  public var a: Int64
  /// The second integer, named by the kind.
  public var b: Int64
  /// The third integer, named by the kind.
  public var c: Int64
  /// A short text for people, hashed when present; nil when there is none.
  public var detail: String?

  /// A record; the integers default to 0 and `detail` to nil.
  @inlinable
  public init(time: VirtualTime, kind: TraceKind, node: Int32, a: Int64 = 0, b: Int64 = 0, c: Int64 = 0, detail: String? = nil) {
    self.time = time
    self.kind = kind
    self.node = node
    self.a = a
    self.b = b
    self.c = c
    self.detail = detail
  }
}

/// Records a run and hashes it as it goes. The hash covers every record in a canonical encoding
/// (time, kind code, node, the three integers, the detail) and whatever its owner folds in
/// (``fold(_:)``: message payloads, final states), so two runs that did different things or
/// ended differently have different hashes — the determinism check of the whole simulator.
///
/// In ``Mode/hashOnly`` (fuzzing) nothing is kept but the hash and the count; in ``Mode/full``
/// the records are kept for export as JSON Lines.
@_spi(Kernel) public struct TraceRecorder: Sendable {
  /// What a recorder keeps besides the hash and the count: nothing (`hashOnly`, for fuzzing), or
  /// every record (`full`, for export).
  public enum Mode: Sendable { case hashOnly, full }

  /// Whether records are kept; fixed when the recorder is made.
  public let mode: Mode
  /// The running hash of everything recorded and folded in so far.
  public var hasher: TraceHasher { _hasher }
  /// How many records were recorded; annotations are not counted.
  public var count: Int { _count }
  /// The kept records in order, annotations included; empty in hash-only mode.
  public var records: [TraceRecord] { _records }
  @usableFromInline var _hasher = TraceHasher()
  @usableFromInline var _count = 0
  @usableFromInline var _records: [TraceRecord] = []

  /// An empty recorder; hash-only unless `mode` is ``Mode/full``.
  public init(mode: Mode = .hashOnly) { self.mode = mode }

  /// Whether records are being kept (callers may skip building `detail` text when not).
  @inlinable public var keepsRecords: Bool { mode == .full }

  /// The hash of everything recorded so far, as 16 hex digits.
  public var hash: String { _hasher.hexDigest }

  /// Hashes and counts one record, and keeps it in full mode.
  @inlinable
  public mutating func record(_ r: TraceRecord) {
    _hash(time: r.time, code: r.kind.code, node: r.node, r.a, r.b, r.c, r.detail)
    _count &+= 1
    if mode == .full { _records.append(r) }
  }

  /// The canonical encoding of one record, fed to the hash.
  @inlinable
  mutating func _hash(time: VirtualTime, code: UInt16, node: Int32, _ a: Int64, _ b: Int64, _ c: Int64, _ detail: String?) {
    _hasher.combine(time.nanoseconds)
    _hasher.combine(UInt64(code) | UInt64(UInt32(bitPattern: node)) << 16)
    _hasher.combine(a)
    _hasher.combine(b)
    _hasher.combine(c)
    if let d = detail { _hasher.combine(d) } else { _hasher.combine(0 as UInt64) }
  }

  /// Folds what a record cannot carry — a message's payload, a final state — into the hash,
  /// without keeping anything.
  @inlinable
  public mutating func fold(_ body: (inout TraceHasher) -> Void) {
    body(&_hasher)
  }

  /// Hashes, counts and (in full mode) keeps a record built from its parts; the integers default
  /// to 0.
  @inlinable
  public mutating func record(
    _ kind: TraceKind, at time: VirtualTime, node: Int32, _ a: Int64 = 0, _ b: Int64 = 0, _ c: Int64 = 0, detail: String? = nil
  ) {
    // Hashed from the parts: no record is built unless it is kept.
    _hash(time: time, code: kind.code, node: node, a, b, c, detail)
    _count &+= 1
    if mode == .full { _records.append(TraceRecord(time: time, kind: kind, node: node, a: a, b: b, c: c, detail: detail)) }
  }

  /// Keeps a record for people (exports, pictures, explanations) without hashing it: the hash
  /// must be the same whether or not the full trace is kept. Does nothing in hash-only mode, so
  /// callers guard expensive details with ``keepsRecords``.
  @inlinable
  public mutating func annotate(
    _ kind: TraceKind, at time: VirtualTime, node: Int32, _ a: Int64 = 0, _ b: Int64 = 0, _ c: Int64 = 0, detail: String? = nil
  ) {
    if mode == .full { _records.append(TraceRecord(time: time, kind: kind, node: node, a: a, b: b, c: c, detail: detail)) }
  }

  /// The kept records as JSON Lines, keys sorted: `{"a":…,"kind":"send","node":"phone","t":…}`.
  /// `nodeNames[i]` names node `i`; other nodes are written as numbers.
  public func jsonLines(nodeNames: [String] = []) -> String {
    var out = ""
    out.reserveCapacity(records.count * 96)
    for r in records {
      var object: [String: JSONValue] = [
        "t": .int(r.time.nanoseconds),
        "time": .string(r.time.description),
        "kind": .string(r.kind.name.description),
        "node": r.node >= 0 && Int(r.node) < nodeNames.count ? .string(nodeNames[Int(r.node)]) : .int(Int64(r.node)),
      ]
      let names = [r.kind.fieldNames.0, r.kind.fieldNames.1, r.kind.fieldNames.2]
      for (name, value) in zip(names, [r.a, r.b, r.c]) where name.description != "-" {
        object[name.description] = .int(value)
      }
      if let d = r.detail { object["detail"] = .string(d) }
      JSONValue.object(object).write(to: &out)
      out.append("\n")
    }
    return out
  }
}
