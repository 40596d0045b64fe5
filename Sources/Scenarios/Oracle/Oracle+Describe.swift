import Replica
import Simulator

extension Oracle {
  /// "phone's edit i7 (set n1.title="x" at 2.200s)"
  func describe(_ intent: Intent, field: Int32? = nil) -> String {
    let who = deviceName(intent.device)
    let r = name(intent.record)
    let type = recordType(of: intent)
    let what: String
    switch intent.kind {
    case .create(_, let values):
      if let field, let v = values.first(where: { $0.field == field }) {
        what = "create \(r) with \(fieldName(type, field))=\(render(v.value))"
      } else {
        what = "create \(r)"
      }
    case .set(let values):
      let shown = values.filter { field == nil || $0.field == field }
      what = "set " + shown.map { "\(r).\(fieldName(type, $0.field))=\(render($0.value))" }.joined(separator: " ")
    case .append(let f, let text):
      what = "append \(quote(text)) to \(r).\(fieldName(type, f))"
    case .replace(let f, let old, let new, _):
      what = "replace \(quote(old))→\(quote(new)) in \(r).\(fieldName(type, f))"
    case .delete:
      what = "delete \(r)"
    }
    let noun = intent.kind.verb == "create" ? "create" : (intent.kind.verb == "delete" ? "delete" : "edit")
    return "\(who)'s \(noun) \(Self.id(intent.id)) (\(what) at \(intent.trueTime))"
  }

  func recordType(of intent: Intent) -> Int32 {
    if case .create(let t, _) = intent.kind { return t }
    return byRecord[intent.record]?.lazy.compactMap { i -> Int32? in
      if case .create(let t, _) = i.kind { return t }
      return nil
    }.first ?? 0
  }

  func render(_ value: Value) -> String {
    switch value {
    case .null: return "nil"
    case .string(let s): return quote(s)
    case .int(let i): return String(i)
    case .bool(let b): return b ? "true" : "false"
    case .date(let ns): return SimDuration(nanoseconds: ns).description
    case .ref(let k): return name(k)
    case .text(let t): return quote(t.string)
    }
  }

  func quote(_ s: String) -> String {
    var out = "\""
    var n = 0
    for ch in s {
      if n == 37, s.count > 40 {
        out += "…"
        break
      }
      if ch == "\n" { out += "\\n" } else { out.append(ch) }
      n += 1
    }
    return out + "\""
  }

  /// "(device clocks: iPad +10m; phone's clock jumped -5m at 20.000s)" when any clock is
  /// skewed, drifting or jumped, else "".
  var clockNote: String {
    var parts: [String] = []
    for (i, c) in world.config.clocks.enumerated() where c.skew != .zero || c.driftPPM != 0 {
      var p = "\(world.config.deviceNames[i]) \(c.skew.nanoseconds >= 0 ? "+" : "")\(c.skew)"
      if c.driftPPM != 0 { p += " \(c.driftPPM > 0 ? "+" : "")\(c.driftPPM)ppm" }
      parts.append(p)
    }
    let jumps = world.facts.clockJumps.map { j in
      "\(deviceName(j.device))'s clock jumped \(j.by.nanoseconds >= 0 ? "+" : "")\(j.by) at \(j.time)"
    }
    guard !parts.isEmpty || !jumps.isEmpty else { return "" }
    let clocks = parts.isEmpty ? "" : "device clocks: " + parts.joined(separator: ", ")
    return " (" + ([clocks] + jumps).filter { !$0.isEmpty }.joined(separator: "; ") + ")"
  }
}
