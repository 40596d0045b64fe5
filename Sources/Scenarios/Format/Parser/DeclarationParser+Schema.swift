import Replica
@_spi(Kernel) import Simulator

/// `type NAME [append-only]` and its indented field lines `name: KIND[?] [= LITERAL] [mutable] [unique]`.
extension DeclarationParser {
  static let kinds = ["string", "text", "int", "double", "bool", "date", "bytes", "asset", "ref"]
  /// Names of Swift and Core Data types, and other common words, for the kind that stands for
  /// them (lowercased): `float` is a typo of no kind, yet plainly means `double`.
  static let kindSynonyms: [String: String] = [
    "float": "double", "decimal": "double", "cgfloat": "double", "number": "double", "real": "double", "float64": "double",
    "data": "bytes", "binary": "bytes", "blob": "bytes", "integer": "int", "int64": "int", "int32": "int", "boolean": "bool",
    "timestamp": "date", "datetime": "date", "reference": "ref", "ckasset": "asset", "file": "asset", "attachment": "asset",
  ]
  static let fieldUsage = "name: KIND[?] [= VALUE] [mutable] [unique] [encrypted] [on-delete RULE] [ordered] [no-inverse] [since N]"
  static let fieldModifiers = ["mutable", "unique", "encrypted", "on-delete", "ordered", "no-inverse", "parent", "since"]

  /// Declares a type; returns its index, or `nil` when its fields should be checked but not kept.
  /// `type NAME [append-only] [singleton | unique-by FIELD[,FIELD...]] [since N]`.
  mutating func parseType(_ i: Int) -> Int? {
    let t = lines[i].tokens
    let usage = Self.typeUsage
    guard t.count >= 2 else {
      missing(i, "expected a type name; write '\(usage)', as in 'type Note'")
      return nil
    }
    guard checkName(i, t[1], "type name") else { return nil }
    let name = t[1].text
    var appendOnly = false
    var singleton: ScenarioToken?
    var uniqueBy: [(String, Int)]?
    var since = 1
    var seen: Set<String> = []
    var k = 2
    while k < t.count {
      let token = t[k]
      k += 1
      guard token.isWord, ["append-only", "singleton", "unique-by", "since"].contains(token.text) else {
        error(
          i, token,
          "unexpected \(Self.shown(token))" + didYouMean(token.text, ["append-only", "singleton", "unique-by", "since"], else: "; write '\(usage)'"))
        continue
      }
      if !seen.insert(token.text).inserted {
        error(i, token, "'\(token.text)' is given twice")
        continue
      }
      switch token.text {
      case "append-only": appendOnly = true
      case "singleton": singleton = token
      case "unique-by":
        guard k < t.count, t[k].isWord, !["append-only", "singleton", "since"].contains(t[k].text) else {
          missing(i, "expected the key's fields after 'unique-by', as in 'unique-by day' or 'unique-by owner,day'")
          continue
        }
        var names: [(String, Int)] = []
        var offset = t[k].start
        for part in t[k].text.split(separator: ",", omittingEmptySubsequences: false) {
          let piece = String(part)
          if piece.isEmpty {
            error(i, offset, "an empty field name in 'unique-by'; separate fields with ',' and no spaces, as in 'unique-by owner,day'")
          } else if names.contains(where: { $0.0 == piece }) {
            error(i, offset, "'\(Self.quoted(piece))' is named twice in 'unique-by'")
          } else {
            names.append((piece, offset))
          }
          offset += piece.unicodeScalars.count + 1
        }
        uniqueBy = names
        k += 1
      default:  // since
        guard let n = parseSince(i, t, &k) else { continue }
        since = n
      }
    }
    if let singleton, uniqueBy != nil {
      error(i, singleton, "a type is either a 'singleton' or 'unique-by' some fields, not both")
    }
    if let singleton, appendOnly {
      error(i, singleton, "an append-only type holds events, made many times; it cannot be a 'singleton'")
    }
    if let prior = typeLines[name] {
      error(i, t[1], "type '\(name)' is already declared on line \(prior)")
      return nil
    }
    typeLines[name] = lines[i].number
    types.append(RecordType(name: name, appendOnly: appendOnly, fields: [], uniqueness: singleton != nil ? .singleton : nil, since: since))
    if let uniqueBy { pendingUniqueKeys.append((types.count - 1, uniqueBy, i)) }
    return types.count - 1
  }

  static let typeUsage = "type NAME [append-only] [singleton | unique-by FIELD,...] [since N]"

  /// `since N` with `t[k - 1]` the `since`: the schema version, 2 … 1000 (1 is the first
  /// version, which needs no `since`); advances `k` past the number.
  mutating func parseSince(_ i: Int, _ t: [ScenarioToken], _ k: inout Int) -> Int? {
    guard k < t.count else {
      missing(i, "expected a schema version after 'since', as in 'since 2'")
      return nil
    }
    let token = t[k]
    k += 1
    guard token.isWord, let n = Int(token.text), (2...1000).contains(n) else {
      error(i, token, "expected a schema version from 2 to 1000 after 'since' (version 1 is the first schema, which needs no 'since')")
      return nil
    }
    return n
  }

  /// Resolves every `unique-by` list against its type's fields, once they are all declared.
  mutating func resolveUniqueKeys() {
    for (typeIndex, names, i) in pendingUniqueKeys {
      var indices: [Int] = []
      for (name, offset) in names {
        if let f = types[typeIndex].fieldIndex(named: name) {
          if types[typeIndex].fields[f].kind == .text {
            error(i, offset, "'\(Self.quoted(name))' is a text field; a unique key is made of string, int, double, bool, date, bytes or ref fields")
          }
          indices.append(f)
        } else if !(brokenFields[types[typeIndex].name] ?? []).contains(name) {
          let fieldNames = types[typeIndex].fields.map(\.name)
          error(
            i, offset,
            "\(types[typeIndex].name) has no field '\(Self.quoted(name))'"
              + didYouMean(name, fieldNames, else: fieldNames.isEmpty ? "; declare its fields on the indented lines below" : ""))
        }
      }
      types[typeIndex].uniqueness = .fields(indices)
    }
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
      return missing(i, "expected a kind after ':': string, text, int, double, bool, date, bytes or ref TYPE")
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
    var field = FieldSpec(name: nameToken.text, kind: kind, optional: optional, since: typeIndex.map { types[$0].since } ?? 1)
    parseFieldModifiers(i, Array(rest[used...]), into: &field)
    guard nameOK, let typeIndex else { return }
    if field.since < types[typeIndex].since {
      error(
        i, nameToken,
        "\(field.name) is 'since \(field.since)' but its type \(types[typeIndex].name) is 'since \(types[typeIndex].since)'; a field is no older than its type"
      )
    }
    let key = "\(types[typeIndex].name).\(field.name)"
    if let prior = fieldLines[key] {
      error(i, nameToken, "field '\(field.name)' is already declared in \(types[typeIndex].name) on line \(prior)")
      return
    }
    guard types[typeIndex].fields.count < 64 else {
      error(i, nameToken, "\(types[typeIndex].name) already has 64 fields, the most a record type may have")
      return
    }
    if field.isParent, let other = types[typeIndex].fields.first(where: \.isParent) {
      error(i, nameToken, "\(types[typeIndex].name) already has a parent field, \(other.name): a record has one CKRecord.parent")
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
      error(i, token, "expected a kind (string, text, int, double, bool, date, bytes, asset or ref TYPE), found a string")
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
    case "double": return (.double, optional, next)
    case "bool": return (.bool, optional, next)
    case "date": return (.date, optional, next)
    case "bytes": return (.bytes, optional, next)
    case "asset": return (.asset, optional, next)
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
        "unknown kind '\(Self.quoted(word))'"
          + (Self.kindSynonyms[word.lowercased()].map { "; did you mean '\($0)'?" }
            ?? didYouMean(word, Self.kinds, else: "; the kinds are string, text, int, double, bool, date, bytes, asset and ref TYPE")))
      return nil
    }
  }

  /// `= VALUE`, `mutable`, `unique`, `on-delete RULE`, `ordered`, `no-inverse`, `parent`,
  /// `since N`, in any order, each at most once.
  mutating func parseFieldModifiers(_ i: Int, _ t: [ScenarioToken], into field: inout FieldSpec) {
    var k = 0
    var sawDefault = false
    var seen: Set<String> = []
    while k < t.count {
      let token = t[k]
      k += 1
      if token.is("mutable") || token.is("unique") || token.is("on-delete") || token.is("since") || token.is("ordered") || token.is("no-inverse")
        || token.is("parent") || token.is("encrypted")
      {
        if !seen.insert(token.text).inserted {
          error(i, token, "'\(token.text)' is given twice")
          if token.text == "on-delete" || token.text == "since" { k += 1 }
          continue
        }
        switch token.text {
        case "mutable": field.mutable = true
        case "unique": field.unique = true
        case "encrypted":
          // (Apple, `CKRecord.encryptedValues`: assets are encrypted by default; references are
          // never encrypted.)
          switch field.kind {
          case .asset: error(i, token, "assets are encrypted by default (CKAsset); remove 'encrypted'")
          case .ref: error(i, token, "a reference cannot be encrypted (CloudKit keeps CKRecord.Reference values in the clear); remove 'encrypted'")
          default: field.encrypted = true
          }
        case "since": if let n = parseSince(i, t, &k) { field.since = n }
        case "ordered", "no-inverse", "parent":
          guard field.referencedType != nil else {
            let says =
              switch token.text {
              case "ordered": "the relationship listing these records on the referred-to type is ordered"
              case "parent": "the reference is the record's CKRecord.parent, which a share of the referred-to record follows"
              default: "the relationship has no inverse"
              }
            error(i, token, "'\(token.text)' is for ref fields: it says \(says)")
            continue
          }
          switch token.text {
          case "ordered": field.ordered = true
          case "parent": field.isParent = true
          default: field.hasInverse = false
          }
        default:
          guard k < t.count else {
            missing(i, "expected a delete rule after 'on-delete': cascade, nullify or deny")
            continue
          }
          let rule = t[k]
          k += 1
          guard field.referencedType != nil else {
            error(i, token, "'on-delete' is for ref fields: it says what happens to this record when the record it refers to is deleted")
            continue
          }
          guard rule.isWord, let r = DeleteRule(rawValue: rule.text) else {
            error(
              i, rule,
              "unknown delete rule \(Self.shown(rule))"
                + didYouMean(rule.text, DeleteRule.allCases.map(\.rawValue), else: "; the rules are cascade, nullify and deny"))
            continue
          }
          field.onDelete = r
        }
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
              + didYouMean(
                token.text, Self.fieldModifiers,
                else: "; after the kind come '= VALUE', 'mutable', 'unique', 'encrypted', 'on-delete RULE', 'ordered', 'no-inverse' and 'since N'"))
        }
        continue
      }
      if sawDefault {
        error(i, token, "a field has one default; this is a second")
        continue
      }
      sawDefault = true
      if field.kind == .asset {
        let written = literalIsString ? Literal.string(literalText).description : literalText
        error(i, literalOffset, "an asset field cannot have a default (a file is written by a device); remove '= \(Self.quoted(written))…'")
        // (The rest of the line is the default's: `asset("x", 1MB)` spans words.)
        return
      }
      guard let literal = value(i, Self.literal(literalText, isString: literalIsString, at: literalOffset)) else { continue }
      field.defaultValue = defaultValue(literal, field, i, at: literalOffset)
    }
  }
}
