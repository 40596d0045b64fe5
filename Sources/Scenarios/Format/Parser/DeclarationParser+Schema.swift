import Replica
@_spi(Kernel) import Simulator

/// `type NAME [append-only]` and its indented field lines `name: KIND[?] [= LITERAL] [mutable] [unique]`.
extension DeclarationParser {
  static let kinds = ["string", "text", "int", "bool", "date", "ref"]
  static let fieldUsage = "name: KIND[?] [= VALUE] [mutable] [unique]"

  /// Declares a type; returns its index, or `nil` when its fields should be checked but not kept.
  mutating func parseType(_ i: Int) -> Int? {
    let t = lines[i].tokens
    let usage = "type NAME [append-only]"
    guard t.count >= 2 else {
      missing(i, "expected a type name; write '\(usage)', as in 'type Note'")
      return nil
    }
    guard checkName(i, t[1], "type name") else { return nil }
    let name = t[1].text
    var appendOnly = false
    if t.count >= 3 {
      if t[2].is("append-only") {
        appendOnly = true
        expectEnd(i, after: 2, usage: usage)
      } else {
        error(i, t[2], "unexpected \(Self.shown(t[2]))" + didYouMean(t[2].text, ["append-only"], else: "; write '\(usage)'"))
      }
    }
    if let prior = typeLines[name] {
      error(i, t[1], "type '\(name)' is already declared on line \(prior)")
      return nil
    }
    typeLines[name] = lines[i].number
    types.append(RecordType(name: name, appendOnly: appendOnly, fields: []))
    return types.count - 1
  }

  /// An indented line with no `type` above it.
  mutating func reportStrayIndentedLine(_ i: Int) {
    let first = lines[i].tokens[0]
    if first.isWord, Self.statementKeywords.contains(first.text) {
      error(i, first, "'\(first.text)' must start at the beginning of the line; only a type's fields are indented")
    } else {
      error(i, first, "an indented line is a field of the 'type' above it, and there is none; write 'type NAME' first")
    }
  }

  mutating func parseField(_ i: Int, into typeIndex: Int?) {
    let t = lines[i].tokens
    // The name and the kind: `title: string`, `title:string`, `title : string`.
    let head = t[0]
    var kindToken: ScenarioToken?
    var next: Int
    let nameToken: ScenarioToken
    let headScalars = Array(head.text.unicodeScalars)
    if head.isWord, let colon = headScalars.firstIndex(of: ":") {
      nameToken = ScenarioToken(
        text: String(String.UnicodeScalarView(headScalars[..<colon])), start: head.start, end: head.start + colon, isString: false, glued: false)
      if colon + 1 < headScalars.count {
        kindToken = ScenarioToken(
          text: String(String.UnicodeScalarView(headScalars[(colon + 1)...])), start: head.start + colon + 1, end: head.end,
          isString: false, glued: true)
        next = 1
      } else {
        next = 2
        kindToken = t.count > 1 ? t[1] : nil
      }
    } else if head.isWord, t.count > 1, t[1].isWord, t[1].text.hasPrefix(":") {
      nameToken = head
      if t[1].text == ":" {
        kindToken = t.count > 2 ? t[2] : nil
        next = 3
      } else {
        kindToken = ScenarioToken(text: String(t[1].text.dropFirst()), start: t[1].start + 1, end: t[1].end, isString: false, glued: true)
        next = 2
      }
    } else {
      if head.isWord, Self.statementKeywords.contains(head.text) {
        error(i, head, "'\(head.text)' must start at the beginning of the line; only a type's fields are indented")
      } else {
        error(i, head, "expected a field, as in 'title: string'; write '\(Self.fieldUsage)'")
      }
      return
    }
    let nameOK = nameToken.text.isEmpty ? false : checkName(i, nameToken, "field name")
    if nameToken.text.isEmpty { error(i, head, "expected a field name before ':'") }
    guard let kindToken else {
      if nameOK, let typeIndex { brokenFields[types[typeIndex].name, default: []].append(nameToken.text) }
      return missing(i, "expected a kind after ':': string, text, int, bool, date or ref TYPE")
    }
    // The kind and what follows it; `string="x"` is split into `string` and `="x"`.
    var rest = [kindToken] + t[min(next, t.count)...]
    let kindScalars = Array(kindToken.text.unicodeScalars)
    if kindToken.isWord, let eq = kindScalars.firstIndex(of: "="), eq > 0 {
      rest[0].text = String(String.UnicodeScalarView(kindScalars[..<eq]))
      rest[0].end = kindToken.start + eq
      let tail = ScenarioToken(
        text: String(String.UnicodeScalarView(kindScalars[eq...])), start: kindToken.start + eq, end: kindToken.end, isString: false, glued: true)
      rest.insert(tail, at: 1)
    }
    guard let (kind, optional, used) = parseKind(i, rest) else {
      if nameOK, let typeIndex { brokenFields[types[typeIndex].name, default: []].append(nameToken.text) }
      return
    }
    var field = FieldSpec(name: nameToken.text, kind: kind, optional: optional)
    parseFieldModifiers(i, Array(rest[used...]), into: &field)
    guard nameOK, let typeIndex else { return }
    let key = "\(types[typeIndex].name).\(field.name)"
    if let prior = fieldLines[key] {
      error(i, nameToken, "field '\(field.name)' is already declared in \(types[typeIndex].name) on line \(prior)")
      return
    }
    guard types[typeIndex].fields.count < 64 else {
      error(i, nameToken, "\(types[typeIndex].name) already has 64 fields, the most a record type may have")
      return
    }
    fieldLines[key] = lines[i].number
    types[typeIndex].fields.append(field)
  }

  /// `string`, `int?`, `ref Note`, `ref Note?` at the start of `t`: the kind, whether it is
  /// optional, and how many tokens it took.
  mutating func parseKind(_ i: Int, _ t: [ScenarioToken]) -> (FieldKind, Bool, Int)? {
    let token = t[0]
    let next = 1
    guard token.isWord else {
      error(i, token, "expected a kind (string, text, int, bool, date or ref TYPE), found a string")
      return nil
    }
    var word = token.text
    var optional = false
    if word.hasSuffix("?") {
      optional = true
      word.removeLast()
    }
    switch word {
    case "string": return (.string, optional, next)
    case "text": return (.text, optional, next)
    case "int": return (.int, optional, next)
    case "bool": return (.bool, optional, next)
    case "date": return (.date, optional, next)
    case "ref":
      if optional {
        error(i, token, "write '?' after the referenced type, as in 'ref Note?'")
        return nil
      }
      guard next < t.count else {
        missing(i, "expected the referenced type after 'ref', as in 'ref Note?'")
        return nil
      }
      var target = t[next]
      if target.isWord, target.text.hasSuffix("?") {
        optional = true
        target.text.removeLast()
      }
      guard checkName(i, target, "type name") else { return nil }
      pendingTypeUses.append((target.text, i, target.start))
      return (.ref(target.text), optional, next + 1)
    default:
      error(
        i, token,
        "unknown kind '\(Self.quoted(word))'" + didYouMean(word, Self.kinds, else: "; the kinds are string, text, int, bool, date and ref TYPE"))
      return nil
    }
  }

  /// `= VALUE`, `mutable`, `unique`, in any order, each at most once.
  mutating func parseFieldModifiers(_ i: Int, _ t: [ScenarioToken], into field: inout FieldSpec) {
    var k = 0
    var sawDefault = false
    while k < t.count {
      let token = t[k]
      k += 1
      if token.is("mutable") || token.is("unique") {
        let already = token.text == "mutable" ? field.mutable : field.unique
        if already { error(i, token, "'\(token.text)' is given twice") }
        if token.text == "mutable" { field.mutable = true } else { field.unique = true }
        continue
      }
      // `= VALUE`, `=VALUE`, `=""`.
      var literalText: String?
      var literalIsString = false
      var literalOffset = token.start
      if token.is("=") {
        guard k < t.count else { return missing(i, "expected a default value after '='") }
        literalText = t[k].text
        literalIsString = t[k].isString
        literalOffset = t[k].start
        k += 1
      } else if token.isWord, token.text.hasPrefix("=") {
        literalText = String(token.text.dropFirst())
        literalOffset = token.start + 1
      }
      guard let literalText else {
        if token.is("?") {
          error(i, token, "write '?' right after the kind, as in 'string?'")
        } else {
          error(
            i, token,
            "unexpected \(Self.shown(token))"
              + didYouMean(token.text, ["mutable", "unique"], else: "; after the kind come '= VALUE', 'mutable' and 'unique'"))
        }
        continue
      }
      if sawDefault {
        error(i, token, "a field has one default; this is a second")
        continue
      }
      sawDefault = true
      guard let literal = value(i, Self.literal(literalText, isString: literalIsString, at: literalOffset)) else { continue }
      field.defaultValue = defaultValue(literal, field, i, at: literalOffset)
    }
  }
}
