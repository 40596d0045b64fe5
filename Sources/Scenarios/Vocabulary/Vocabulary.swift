import Replica
@_spi(Kernel) import Simulator

/// The words for a run: devices, records, fields and intents as the scenario named them, values
/// rendered, intents described. The one place where a run's typed identities become text —
/// reports, explanations, pictures and the JSON Lines trace all speak through it.
///
///     let words = Vocabulary(world: result.world, recordNames: result.recordNames)
///     words.record(0)                  // "n1"
///     words.describe(result.world.log[7])
///     // "phone's edit i7 (set n1.title="x" at 2.200s)"
package struct Vocabulary: Sendable {
  package let deviceNames: [String]
  package let recordNames: [String]
  package let schema: Schema
  package let accountNames: [String]
  package let shareNames: [String]
  /// Per share, the root record of a hierarchy share (nil: zone-wide).
  package let shareRoots: [RecordKey?]
  /// Per share, the name of the zone it shares (nil: the app's zone, or a hierarchy).
  package let shareZoneNames: [String?]
  /// Each record's type, from the first intent that created it (lookups only).
  let _types: [Int32]

  package init(world: borrowing SyncWorld, recordNames: [String]) {
    deviceNames = world.config.deviceNames
    accountNames = world.config.accounts
    shareNames = world.config.shares
    shareRoots = world.config.shareRoots
    let zoneNames = world.config.zoneNames
    shareZoneNames = world.config.shareZones.map { z in z > 0 && Int(z) <= zoneNames.count ? zoneNames[Int(z) - 1] : nil }
    self.recordNames = recordNames
    schema = world.config.schema
    var types: [Int32] = []
    for i in world.log.intents {
      guard case .create(let t, _) = i.kind, i.record >= 0 else { continue }
      types._grow(toHold: Int(i.record), with: -1)
      if types[Int(i.record)] < 0 { types[Int(i.record)] = t }
    }
    _types = types
  }

  // MARK: Identities

  /// A device's name.
  package func device(_ d: Int32) -> String {
    d >= 0 && Int(d) < deviceNames.count ? deviceNames[Int(d)] : "device \(d)"
  }

  /// An iCloud account's name.
  package func account(_ a: Int32) -> String {
    a >= 0 && Int(a) < accountNames.count ? accountNames[Int(a)] : "account \(a)"
  }

  /// A share's name.
  package func share(_ s: Int32) -> String {
    s >= 0 && Int(s) < shareNames.count ? shareNames[Int(s)] : "share \(s)"
  }

  /// What a share action does, in words: `invites bob to album (read-write)`.
  package func shareAction(_ action: ShareAction) -> String {
    switch action {
    case .share(let s):
      if Int(s) < shareRoots.count, let root = shareRoots[Int(s)] {
        "shares \(record(root)) and the records below it as \(share(s))"
      } else if Int(s) < shareZoneNames.count, let zone = shareZoneNames[Int(s)] {
        "shares its zone \(zone) as \(share(s))"
      } else {
        "shares its zone as \(share(s))"
      }
    case .invite(let s, let a, let p): "invites \(account(a)) to \(share(s)) (\(p.rawValue))"
    case .accept(let s): "accepts \(share(s))"
    case .leave(let s): "leaves \(share(s))"
    case .unshare(let s): "stops sharing \(share(s))"
    case .permission(let s, let a, let p): "makes \(account(a)) \(p.rawValue) on \(share(s))"
    case .remove(let s, let a): "removes \(account(a)) from \(share(s))"
    }
  }

  /// A lane's name: a device's, or `server` for the lane after the last device.
  func node(_ lane: Int) -> String { lane >= 0 && lane < deviceNames.count ? deviceNames[lane] : "server" }

  /// A device's name, or `server`.
  package func node(_ n: WorldNode) -> String {
    switch n {
    case .device(let d): device(d)
    case .server: "server"
    }
  }

  /// A record's name (`n1`), or `r7` for a key no scenario named.
  package func record(_ key: RecordKey) -> String {
    key >= 0 && Int(key) < recordNames.count ? recordNames[Int(key)] : "r\(key)"
  }

  /// The key of a named record.
  package func key(_ name: String) -> RecordKey? { recordNames.firstIndex(of: name).map { RecordKey($0) } }

  /// A record's type index.
  package func type(of key: RecordKey) -> Int32? { types(key) }

  /// The record's type, from the intent that created it (nil when none did).
  func types(_ key: RecordKey) -> Int32? {
    key >= 0 && Int(key) < _types.count && _types[Int(key)] >= 0 ? _types[Int(key)] : nil
  }

  /// A field's name (`title`), or `f3` when the record's type is unknown.
  package func field(_ key: RecordKey, _ f: Int) -> String {
    guard let t = types(key), Int(t) < schema.types.count, f >= 0, f < schema.types[Int(t)].fields.count else { return "f\(f)" }
    return schema.types[Int(t)].fields[f].name
  }

  /// The index of a record's field by name.
  package func fieldIndex(_ key: RecordKey, named name: String) -> Int? {
    types(key).flatMap { Int($0) < schema.types.count ? schema.types[Int($0)].fieldIndex(named: name) : nil }
  }

  /// A field's kind.
  package func fieldKind(_ key: RecordKey, _ f: Int) -> FieldKind? {
    guard let t = types(key), Int(t) < schema.types.count, f >= 0, f < schema.types[Int(t)].fields.count else { return nil }
    return schema.types[Int(t)].fields[f].kind
  }

  /// `i7`.
  package static func intent(_ id: IntentID) -> String { "i\(id)" }

  /// `i7`, or `default` for the schema's default value (intent 0).
  package static func writer(_ id: IntentID) -> String { id == 0 ? "default" : "i\(id)" }

  // MARK: Values

  /// A value as a scenario would write it: `"text"`, `42`, `3.5`, `true`, `2.5s`, `0x1f`, `n1`,
  /// `nil` (bytes past the 16th cut, with their count).
  package func render(_ value: Value) -> String {
    var out = ""
    render(value, into: &out)
    return out
  }

  /// Appends ``render(_:)``'s text to `out` (sentences are built in one string, not joined from
  /// pieces).
  package func render(_ value: Value, into out: inout String) {
    switch value {
    case .null: out += "nil"
    case .string(let s): quote(s, into: &out)
    case .int(let i): out += String(i)
    case .bool(let b): out += b ? "true" : "false"
    case .date(let ns): out += SimDuration(nanoseconds: ns).description
    case .ref(let k): out += record(k)
    case .text(let t): quote(t.string, into: &out)
    case .double(let d): out += Literal.spelled(d)
    case .bytes(let b):
      // As `quote` cuts text: the first 16 bytes of longer ones, and how many there are.
      if b.count <= 16 {
        out += Literal.spelled(b)
      } else {
        out += Literal.spelled(Array(b.prefix(16))) + "… (\(b.count) bytes)"
      }
    case .content(let c):
      out += Literal.content(name: c.name, size: c.size, isAsset: c.isAsset).description
      if !c.hasData { out += " (without its data)" }
    }
  }

  /// A string in quotes, cut after 37 characters of a longer one, newlines as `\n`.
  package func quote(_ s: String) -> String {
    var out = ""
    quote(s, into: &out)
    return out
  }

  /// Appends ``quote(_:)``'s text to `out`.
  package func quote(_ s: String, into out: inout String) {
    // Most values are short ASCII without a newline: each byte is a character and the text
    // goes in whole. (Without a carriage return, ASCII has no character of two scalars.)
    var plain = s.utf8.count <= 40
    if plain {
      for b in s.utf8 where b >= 0x80 || b == 0x0A || b == 0x0D {
        plain = false
        break
      }
    }
    out += "\""
    if plain {
      out += s
    } else {
      var n = 0
      for ch in s {
        if n == 37, s.count > 40 {
          out += "…"
          break
        }
        if ch == "\n" { out += "\\n" } else { out.append(ch) }
        n += 1
      }
    }
    out += "\""
  }

  // MARK: Intents

  /// What an intent did, without who and when: `set n1.title="x"`, `append " +3" to n1.body`.
  /// With `field`, a create or set names only that field.
  package func what(_ intent: Intent, field: Int32? = nil) -> String {
    var out = ""
    what(intent, field: field, into: &out)
    return out
  }

  /// Appends ``what(_:field:)``'s text to `out`.
  func what(_ intent: Intent, field: Int32?, into out: inout String) {
    let r = record(intent.record)
    let type = types(intent.record) ?? 0
    func name(_ f: Int32) -> String {
      Int(type) < schema.types.count && Int(f) < schema.types[Int(type)].fields.count ? schema.types[Int(type)].fields[Int(f)].name : "f\(f)"
    }
    /// `n1.title`.
    func recordField(_ f: Int32) {
      out += r
      out += "."
      out += name(f)
    }
    switch intent.kind {
    case .create(_, let values):
      out += "create "
      out += r
      if let field, let v = values.first(where: { $0.field == field }) {
        out += " with "
        out += name(field)
        out += "="
        render(v.value, into: &out)
      }
    case .set(let values):
      out += "set "
      var first = true
      for v in values where field == nil || v.field == field {
        if !first { out += " " }
        first = false
        recordField(v.field)
        out += "="
        render(v.value, into: &out)
      }
    case .append(let f, let text):
      out += "append "
      quote(text, into: &out)
      out += " to "
      recordField(f)
    case .replace(let f, let old, let new, _):
      out += "replace "
      quote(old, into: &out)
      out += "→"
      quote(new, into: &out)
      out += " in "
      recordField(f)
    case .delete:
      out += "delete "
      out += r
    }
  }

  /// Who did what when: `phone's edit i7 (set n1.title="x" at 2.200s)`.
  package func describe(_ intent: Intent, field: Int32? = nil) -> String {
    var out = ""
    out.reserveCapacity(64)
    out += device(intent.device)
    switch intent.kind {
    case .create: out += "'s create "
    case .delete: out += "'s delete "
    default: out += "'s edit "
    }
    out += Self.intent(intent.id)
    out += " ("
    what(intent, field: field, into: &out)
    out += " at "
    out += intent.trueTime.description
    out += ")"
    return out
  }
}
