extension ImportedModel {
  /// The schema section of a scenario file: a header comment, then one `type` line per type and
  /// one line per field, in declaration order, each with a comment giving where it is declared.
  /// Deterministic: the same model gives the same text.
  public func scenarioSchema() -> String {
    let count = versions.count
    let label = count >= 2 ? "\(source.displayName), \(count) versions" : source.displayName
    var out = "# imported from \(origin) (\(label))\n"
    out += "# No field is marked `mutable`: add it to the fields your app edits after creating a record.\n"
    if types.isEmpty { return out + "# (no types)\n" }
    var lines: [(text: String, comment: String)] = []
    for type in types {
      var head = "type \(type.name)"
      if type.singleton { head += " singleton" }
      if !type.uniqueBy.isEmpty { head += " unique-by \(type.uniqueBy.joined(separator: ","))" }
      if type.since >= 2 { head += " since \(type.since)" }
      lines.append((head, type.location.description))
      for field in type.fields {
        var line = "  \(field.name): \(field.kind.scenarioName)\(field.optional ? "?" : "")"
        if let literal = field.defaultLiteral, case .ref = field.kind {
          _ = literal
        } else if let literal = field.defaultLiteral {
          line += " = \(literal)"
        }
        if field.unique { line += " unique" }
        if let rule = field.onDelete { line += " on-delete \(rule.rawValue)" }
        if field.ordered { line += " ordered" }
        if !field.hasInverse { line += " no-inverse" }
        if field.since >= 2 && field.since > type.since { line += " since \(field.since)" }
        var comment = field.location.description
        if let inverse = field.inverseOf { comment += ", inverse of \(inverse)" }
        lines.append((line, comment))
      }
    }
    let width = min(lines.map(\.text.count).max() ?? 0, 60) + 2
    for line in lines {
      let pad = max(2, width - line.text.count)
      out += line.text + String(repeating: " ", count: pad) + "# " + line.comment + "\n"
    }
    return out
  }
}
