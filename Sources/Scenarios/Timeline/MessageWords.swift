import Replica
import Simulator

/// Messages and server decisions in words, with record and field names: `n1 (title←i1, body←i2)`.
struct MessageWords {
  let history: RunHistory
  var names: Names { history.names }

  /// What a message carries.
  func contents(_ m: RunHistory.Message) -> String {
    let d = m.detail
    switch m.code {
    case 1:
      return d.entries.map(entry).joined(separator: "; ")
    case 2:
      let push = history.request(answeredBy: m)
      return d.entries.enumerated().map { k, e -> String in
        let key = e.key ?? push.flatMap { k < $0.detail.entries.count ? $0.detail.entries[k].key : nil }
        let r = key.map(names.record) ?? "?"
        switch e.outcome ?? "" {
        case "saved": return "\(r) saved" + (e.tag.map { " as tag \($0)" } ?? "")
        case "conflict": return "\(r) conflict (server at tag \(e.tag ?? 0))"
        case "refused": return "\(r) refused: deleted on the server"
        case "deleted": return "\(r) deleted"
        default: return "\(r) \(e.outcome ?? "")"
        }
      }.joined(separator: "; ")
    case 3:
      return d.everything ? "everything (no token)" : "changes since token \(d.token ?? 0)"
    case 4:
      if d.tokenExpired { return "token expired" }
      let list = d.entries.map(entry)
      return (list.isEmpty ? "no changes" : list.joined(separator: "; ")) + "; next token \(d.token ?? 0)" + (d.moreComing ? ", more to come" : "")
    case 5:
      return "something changed"
    default:
      return d.text
    }
  }

  /// `i7`, or `default` for the schema's default value (intent 0).
  static func writer(_ id: IntentID) -> String { id == 0 ? "default" : "i\(id)" }

  /// `n1 tag 2 (title←i1, body←i2)` or `delete n1 (i5)`.
  func entry(_ e: MessageDetail.Entry) -> String {
    guard let key = e.key else { return "?" }
    let r = names.record(key)
    let tag = e.tag.map { " tag \($0)" } ?? ""
    if let by = e.deletedBy { return e.tag == nil ? "delete \(r) (i\(by))" : "\(r)\(tag) deleted by i\(by)" }
    return "\(r)\(tag) (" + e.writers.map { "\(names.field(key, $0.field))←\(Self.writer($0.writer))" }.joined(separator: ", ") + ")"
  }

  /// ` — sent title←i1, body←i2; holds title←i1, body←i2 as tag 2`.
  func storeResult(_ s: RunHistory.Store) -> String {
    var text = ""
    if !s.detail.sent.isEmpty { text += " — sent " + fields(s.detail.sent, key: s.key, stamps: false) }
    if !s.detail.result.isEmpty { text += "; holds " + fields(s.detail.result, key: s.key, stamps: false) + (s.detail.tag.map { " as tag \($0)" } ?? "") }
    return text
  }

  /// `title←i1, body←i2`, optionally with stamps: `body←i2 (clock 3.000s, hlc 3.000s+0)`.
  func fields(_ list: [StoreDetail.FieldStamp], key: RecordKey, stamps: Bool) -> String {
    list.map { f in
      "\(names.field(key, f.field))←\(Self.writer(f.writer))" + (stamps ? " (clock \(f.clockText), hlc \(f.hlcText))" : "")
    }.joined(separator: ", ")
  }
}
