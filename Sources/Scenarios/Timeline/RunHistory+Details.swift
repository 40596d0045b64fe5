import Replica
import Simulator

/// A message annotation's `detail` read back (grammar in `SyncWorld+Annotations.swift`):
/// `push 3: r0=f0←i1,f1←i2`, `fetch-reply 4: r0@2=delete←i5 → token 5`, `fetch 4 since 2`.
struct MessageDetail {
  struct Entry {
    /// nil when the reply did not name the record (`-:deleted`).
    var key: RecordKey?
    /// The change tag a fetch reply or push reply carries.
    var tag: Int64?
    /// `(field, writer)` pairs of a saved copy.
    var writers: [(field: Int, writer: IntentID)] = []
    /// The delete intent of a deletion.
    var deletedBy: IntentID?
    /// A push reply's result: `saved`, `conflict`, `refused`, `deleted`, `rejected`.
    var outcome: String?
  }

  var text: String
  var kind: String
  var request: Int64?
  var entries: [Entry] = []
  /// A fetch's starting token, or a fetch reply's next token.
  var token: Int64?
  /// A fetch of everything (nil token).
  var everything = false
  var moreComing = false
  var tokenExpired = false

  init(_ text: String) {
    self.text = text
    let words = text.split(separator: " ").map(String.init)
    kind = words.first ?? ""
    guard words.count > 1 else { return }
    request = Int64(words[1].hasSuffix(":") ? String(words[1].dropLast()) : words[1])
    var i = 2
    if kind == "fetch" {
      if i < words.count, words[i] == "everything" { everything = true }
      if i + 1 < words.count, words[i] == "since" { token = Int64(words[i + 1]) }
      return
    }
    while i < words.count {
      let w = words[i]
      i += 1
      if w == "expired" { tokenExpired = true }
      if w == "token", i < words.count, words[i] != "expired" {
        let t = words[i]
        moreComing = t.hasSuffix(",")
        token = Int64(moreComing ? String(t.dropLast()) : t)
        i += 1
        continue
      }
      guard w.hasPrefix("r") || w.hasPrefix("-") else { continue }
      entries.append(Self.entry(w))
    }
  }

  static func entry(_ w: String) -> Entry {
    var e = Entry()
    guard let cut = w.firstIndex(where: { $0 == "=" || $0 == ":" }) else { return e }
    let head = w[..<cut]
    let body = String(w[w.index(after: cut)...])
    let parts = head.split(separator: "@")
    if let k = parts.first, k.hasPrefix("r") { e.key = RecordKey(k.dropFirst()) }
    if parts.count > 1 { e.tag = Int64(parts[1]) }
    if w[cut] == ":" {
      let o = body.split(separator: "@")
      e.outcome = o.first.map(String.init)
      if o.count > 1 { e.tag = Int64(o[1]) }
    } else if body.hasPrefix("delete←i") {
      e.deletedBy = IntentID(body.dropFirst("delete←i".count))
    } else {
      for pair in body.split(separator: ",") {
        let fw = pair.split(separator: "←")
        guard fw.count == 2, let f = Int(fw[0].dropFirst()), let i = IntentID(fw[1].dropFirst()) else { continue }
        e.writers.append((f, i))
      }
    }
    return e
  }

  /// The entry for one record, if the message carries it.
  func entry(for key: RecordKey) -> Entry? { entries.first { $0.key == key } }

  static func kindName(_ code: Int64) -> String {
    switch code {
    case 1: "push"
    case 2: "push-reply"
    case 3: "fetch"
    case 4: "fetch-reply"
    case 5: "notify"
    default: "message"
    }
  }
}

/// A `server-store` annotation's `detail` read back:
/// `sent f0←i1(clock 0.000s, hlc 0.000s+0) → saved tag 2: f0←i1(clock 0.000s, hlc 0.000s+0)`.
struct StoreDetail {
  /// One field's writer and the policy's stamp on it.
  struct FieldStamp {
    var field: Int
    var writer: IntentID
    var clockText: String
    var hlcText: String
    var clock: Int64?
    var hlcWall: Int64?
    var hlcLogical: Int64

    /// `hlc 3.000s+0` with the logical counter.
    var hlc: String { hlcText }
  }

  var sent: [FieldStamp] = []
  /// What the server holds afterwards (saves only).
  var result: [FieldStamp] = []
  /// `saved tag 2`, `conflict with tag 3`, `refused: deleted`, `deleted`, `rejected type X`.
  var outcomeText = ""
  var tag: Int64?

  init(_ text: String) {
    var rest = Substring(text)
    if rest.hasPrefix("sent ") { rest = rest.dropFirst(5) }
    guard let arrow = rest.firstRange(of: " → ") else {
      sent = Self.fields(rest)
      return
    }
    sent = Self.fields(rest[..<arrow.lowerBound])
    let outcome = rest[arrow.upperBound...]
    if outcome.hasPrefix("saved tag "), let colon = outcome.firstIndex(of: ":") {
      outcomeText = String(outcome[..<colon])
      tag = Int64(outcome[outcome.index(outcome.startIndex, offsetBy: 10)..<colon])
      result = Self.fields(outcome[outcome.index(after: colon)...])
    } else {
      outcomeText = String(outcome)
    }
  }

  /// The sent stamp of one field.
  func sent(_ field: Int) -> FieldStamp? { sent.first { $0.field == field } }
  func result(_ field: Int) -> FieldStamp? { result.first { $0.field == field } }

  static func fields(_ s: Substring) -> [FieldStamp] {
    var out: [FieldStamp] = []
    for chunk in s.split(separator: ")") {
      let c = chunk.drop { $0 == " " }
      guard let open = c.firstIndex(of: "(") else { continue }
      let fw = c[..<open].split(separator: "←")
      guard fw.count == 2, let f = Int(fw[0].dropFirst()), let w = IntentID(fw[1].dropFirst()) else { continue }
      let inside = c[c.index(after: open)...]
      let parts = inside.split(separator: ",").map { String($0.drop { $0 == " " }) }
      let clockText = parts.first.map { $0.hasPrefix("clock ") ? String($0.dropFirst(6)) : $0 } ?? ""
      let hlcText = parts.count > 1 ? (parts[1].hasPrefix("hlc ") ? String(parts[1].dropFirst(4)) : parts[1]) : ""
      var wall: Int64?
      var logical: Int64 = 0
      if let plus = hlcText.lastIndex(of: "+") {
        wall = parseSeconds(hlcText[..<plus])
        logical = Int64(hlcText[hlcText.index(after: plus)...]) ?? 0
      }
      out.append(FieldStamp(field: f, writer: w, clockText: clockText, hlcText: hlcText, clock: parseSeconds(Substring(clockText)), hlcWall: wall, hlcLogical: logical))
    }
    return out
  }
}

/// `-1.500s` → -1_500_000_000 (nanoseconds); nil if not in that form.
func parseSeconds(_ s: Substring) -> Int64? {
  var t = s
  guard t.hasSuffix("s") else { return nil }
  t = t.dropLast()
  let negative = t.hasPrefix("-")
  if negative { t = t.dropFirst() }
  let parts = t.split(separator: ".", omittingEmptySubsequences: false)
  guard let whole = Int64(parts[0]) else { return nil }
  var fraction: Int64 = 0
  if parts.count > 1 {
    let digits = String(parts[1].prefix(9))
    guard let f = Int64(digits) else { return nil }
    fraction = f
    for _ in digits.count..<9 { fraction *= 10 }
  }
  let (m, o1) = whole.multipliedReportingOverflow(by: 1_000_000_000)
  let (v, o2) = m.addingReportingOverflow(fraction)
  if o1 || o2 { return negative ? .min : .max }
  return negative ? -v : v
}
