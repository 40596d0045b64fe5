/// The shape of a Swift type as written: `String?`, `[Leg]`, `Optional<Date>`, `SchemaV1.Trip`.
struct SwiftTypeShape {
  var text: String
  /// The bare name (`Trip` for `SchemaV1.Trip?`), or the whole text when it is not a plain name.
  var name: String
  var optional: Bool
  /// `[X]` or `Array<X>`: the element's name.
  var element: String?

  init(_ text: String) {
    self.text = text
    var t = Substring(text)
    var optional = false
    func unwrap() {
      // The trailing `?` and `!` are counted in the UTF-8 view and cut once: dropping one
      // character at a time from a Substring costs its length each time (100,000 `?` took 25 s).
      var end = t.utf8.endIndex
      while end > t.utf8.startIndex {
        let before = t.utf8.index(before: end)
        guard t.utf8[before] == UInt8(ascii: "?") || t.utf8[before] == UInt8(ascii: "!") else { break }
        end = before
      }
      if end < t.utf8.endIndex {
        optional = true
        t = t[..<end]
      }
      if t.hasPrefix("Optional<") && t.hasSuffix(">") {
        optional = true
        t = t.dropFirst(9).dropLast()
      }
    }
    unwrap()
    unwrap()
    self.optional = optional
    var element: Substring?
    if t.hasPrefix("[") && t.hasSuffix("]") && !t.contains(":") {
      element = t.dropFirst().dropLast()
    } else if t.hasPrefix("Array<") && t.hasSuffix(">") {
      element = t.dropFirst(6).dropLast()
    }
    self.element = element.map { Self.bareName($0) }
    name = Self.bareName(t)
  }

  static func bareName(_ t: Substring) -> String {
    let isPlain = t.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
    guard isPlain, let last = t.split(separator: ".").last else { return String(t) }
    return String(last)
  }

  static let stringTypes: Set<String> = ["String", "Substring", "Character"]
  static let intTypes: Set<String> = ["Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64"]
  /// Swift's floating-point and decimal types: kind `double`.
  static let doubleTypes: Set<String> = ["Double", "Float", "Float16", "Float32", "Float64", "Float80", "CGFloat", "Decimal", "TimeInterval"]
  static let knownOpaque: Set<String> = ["UUID", "URL", "AttributedString", "PersistentIdentifier"]
}

/// A default value as written in Swift.
enum SwiftDefault {
  case string(String)
  case int(Int64)
  /// A floating-point literal (`0.5`, `1e3`, `-2.25`), finite.
  case double(Double)
  case bool(Bool)
  case nilLiteral
  case other(String)
}

/// A property as read from a `@Model` class, before types are resolved.
struct SwiftProperty {
  var name: String
  var location: SourceLocation
  var shape: SwiftTypeShape?
  var defaultValue: SwiftDefault?
  var unique = false
  /// `@Attribute(.unique)` with no other option.
  var uniqueAlone = false
  var originalName: String?
  var isRelationship = false
  var deleteRule: RawDeleteRule?
  var inverse: String?
}

struct SwiftModel {
  var name: String
  var location: SourceLocation
  /// The enclosing `VersionedSchema` enum, if any.
  var schema: String?
  var properties: [SwiftProperty] = []
  var uniqueness: [RawUniqueness] = []
}

struct SwiftSchema {
  var name: String
  var location: SourceLocation
  var version: [Int]?
  /// The `models` list: (qualifier, name) of each `X.self`.
  var models: [(qualifier: String?, name: String)]?
}

/// Reads SwiftData sources: `@Model` classes, `VersionedSchema` enums, declared enums and structs.
struct SwiftDataReader {
  var log = FindingLog()
  var models: [SwiftModel] = []
  var schemas: [SwiftSchema] = []
  var valueTypes: Set<String> = []
  var extensions: [(name: String, location: SourceLocation)] = []

  static let modifiers: Set<String> = [
    "public", "private", "fileprivate", "internal", "package", "open", "final", "static", "lazy", "weak", "unowned", "nonisolated",
    "override", "required", "convenience", "mutating", "nonmutating", "dynamic", "indirect", "optional", "class",
  ]
  static let maximumNesting = 16

  mutating func read(file: String, text: String) {
    var reader = FileReader(lexer: SwiftLexer(text: text), file: file)
    for p in reader.lexer.problems {
      log.note(
        SourceLocation(file: file, line: p.line, column: p.column), "unreadable-source",
        "\(p.message.prefix(1).uppercased())\(p.message.dropFirst()).")
    }
    reader.scan(0..<reader.lexer.tokens.count, schema: nil, depth: 0, into: &self)
  }

  /// The versions, oldest first, and their names (empty names for unversioned sources).
  mutating func finish() -> (versions: [RawVersion], names: [String]) {
    let allNames = Set(models.map(\.name))
    var groups: [(name: String, models: [SwiftModel])] = []
    if schemas.isEmpty {
      var seen: Set<String> = []
      var list: [SwiftModel] = []
      for m in models {
        if seen.contains(m.name) {
          log.note(m.location, "duplicate-model", "A second @Model class named \(m.name) is not read; the first one is.")
          continue
        }
        seen.insert(m.name)
        list.append(m)
      }
      groups.append(("", list))
    } else {
      for s in schemas where s.version == nil {
        log.note(s.location, "unreadable-source", "The versionIdentifier of \(s.name) could not be read; the schema is ordered as declared.")
      }
      let ordered = schemas.enumerated().sorted { a, b in
        let va = a.element.version ?? [0, 0, 0]
        let vb = b.element.version ?? [0, 0, 0]
        return va.lexicographicallyPrecedes(vb) || (va == vb && a.offset < b.offset)
      }.map(\.element)
      var listed: Set<String> = []
      for s in ordered {
        var list: [SwiftModel] = []
        if let refs = s.models {
          for ref in refs {
            let found =
              models.first { $0.name == ref.name && $0.schema == (ref.qualifier ?? s.name) }
              ?? models.first { $0.name == ref.name && $0.schema == nil } ?? models.first { $0.name == ref.name }
            guard let found else {
              log.note(
                s.location, "unreadable-source", "\(s.name).models lists \(ref.name), which is not a @Model class in the input; it is not read.")
              continue
            }
            if !list.contains(where: { $0.name == found.name }) { list.append(found) }
          }
        } else {
          list = models.filter { $0.schema == s.name }
        }
        for m in list { listed.insert("\(m.schema ?? "").\(m.name)") }
        groups.append((s.name, list))
      }
      let unlisted = models.filter { !listed.contains("\($0.schema ?? "").\($0.name)") && $0.schema == nil }
      for m in unlisted where !groups[groups.count - 1].models.contains(where: { $0.name == m.name }) {
        log.note(m.location, "unversioned-model", "\(m.name) is not in any VersionedSchema; it is read as part of the latest version.")
        groups[groups.count - 1].models.append(m)
      }
    }
    var versions: [RawVersion] = []
    for (index, group) in groups.enumerated() {
      let latest = index == groups.count - 1
      let names = Set(group.models.map(\.name))
      var entities: [RawEntity] = []
      for m in group.models {
        var entity = RawEntity(name: m.name, location: m.location)
        entity.uniqueness = m.uniqueness
        for p in m.properties {
          if let raw = resolve(p, in: m, models: names.isEmpty ? allNames : names, report: latest) { entity.properties.append(raw) }
        }
        entities.append(entity)
      }
      versions.append(RawVersion(name: group.name, entities: entities))
    }
    if let latest = versions.last {
      let names = Set(latest.entities.map(\.name))
      for e in extensions where names.contains(e.name) {
        log.note(
          e.location, "extension-not-read",
          "This extension of \(e.name) is not read: extensions cannot hold stored properties, so the model's fields are all in its class.")
      }
    }
    return (versions, schemas.isEmpty ? [] : groups.map(\.name))
  }

  /// The property with its kind and default resolved; findings only for the latest version.
  mutating func resolve(_ p: SwiftProperty, in model: SwiftModel, models: Set<String>, report: Bool) -> RawProperty? {
    guard let shape = p.shape else { return nil }
    let kind: RawKind
    if let element = shape.element, models.contains(element) {
      kind = .relationship(element, toMany: true)
    } else if models.contains(shape.name) {
      kind = .relationship(shape.name, toMany: false)
    } else if SwiftTypeShape.stringTypes.contains(shape.name) {
      kind = .string
    } else if SwiftTypeShape.intTypes.contains(shape.name) {
      kind = .int
    } else if SwiftTypeShape.doubleTypes.contains(shape.name) {
      kind = .double
      if shape.name == "Decimal" && report {
        log.note(
          p.location, "kind-approximated",
          "\(model.name).\(p.name): Decimal is simulated as a double (a binary number of about 16 digits): decimals that differ only past that compare equal."
        )
      }
    } else if shape.name == "Data" {
      kind = .bytes
    } else if shape.name == "Bool" {
      kind = .bool
    } else if shape.name == "Date" {
      kind = .date
    } else {
      kind = .opaque(shape.text)
      if report {
        let what =
          if SwiftTypeShape.knownOpaque.contains(shape.name) || shape.element != nil {
            "\(shape.text) has no scenario kind"
          } else if valueTypes.contains(shape.name) {
            "\(shape.name) is an enum or struct of the input"
          } else {
            "\(shape.name) is not declared in the input (assumed a Codable value)"
          }
        log.note(
          p.location, "opaque-type",
          "\(model.name).\(p.name): \(what); simulated as an opaque value of kind string: only which write it came from matters.")
      }
    }
    if p.isRelationship && !kind.isRelationship && report {
      log.note(
        p.location, "unreadable-source", "@Relationship on \(model.name).\(p.name), whose type \(shape.text) is not a @Model class of the input.")
    }
    var raw = RawProperty(name: p.name, location: p.location, typeText: shape.text, kind: kind, optional: shape.optional)
    raw.unique = p.unique
    raw.uniqueAlone = p.uniqueAlone
    raw.originalName = p.originalName
    raw.deleteRule = p.deleteRule
    raw.inverse = p.inverse
    if let d = p.defaultValue {
      switch (d, kind) {
      case (.nilLiteral, _):
        break
      case (_, .relationship):
        raw.hasDefault = true
      case (.string(let s), .string):
        raw.hasDefault = true
        if s.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" }) {
          raw.defaultLiteral = ScenarioText.quoted(s)
        } else {
          raw.defaultText = ScenarioText.quoted(s)
        }
      case (.int(let v), .int):
        raw.hasDefault = true
        raw.defaultLiteral = String(v)
      case (.bool(let v), .bool):
        raw.hasDefault = true
        raw.defaultLiteral = v ? "true" : "false"
      case (.int(let v), .double):
        raw.hasDefault = true
        raw.defaultLiteral = Double(v).description
      case (.double(let v), .double):
        raw.hasDefault = true
        raw.defaultLiteral = v.description
      case (.double(let v), _):
        raw.hasDefault = true
        raw.defaultText = v.description
      case (.other(let text), .bytes) where text == "Data()" || text == "[]" || text == ".init()":
        raw.hasDefault = true
        raw.defaultLiteral = "0x"
      case (.string(let s), _):
        raw.hasDefault = true
        raw.defaultText = ScenarioText.quoted(s)
      case (.int(let v), _):
        raw.hasDefault = true
        raw.defaultText = String(v)
      case (.bool(let v), _):
        raw.hasDefault = true
        raw.defaultText = v ? "true" : "false"
      case (.other(let text), _):
        raw.hasDefault = true
        raw.defaultText = text
      }
    }
    return raw
  }
}

/// Walks the tokens of one file.
struct FileReader {
  let lexer: SwiftLexer
  let file: String

  var tokens: [SwiftToken] { lexer.tokens }

  func location(_ index: Int) -> SourceLocation {
    let t = index < tokens.count ? tokens[index] : (tokens.last ?? SwiftToken(kind: .punct, start: 0, end: 0, line: 1, column: 1, firstOnLine: true))
    return SourceLocation(file: file, line: t.line, column: t.column)
  }

  func isIdent(_ index: Int, _ name: String? = nil) -> Bool {
    guard index < tokens.count, tokens[index].kind == .identifier else { return false }
    return name.map { lexer.text(at: index) == $0 } ?? true
  }

  func isOpen(_ index: Int) -> Bool {
    lexer.isPunct(index, UInt8(ascii: "(")) || lexer.isPunct(index, UInt8(ascii: "[")) || lexer.isPunct(index, UInt8(ascii: "{"))
  }

  func p(_ index: Int, _ c: Character) -> Bool { lexer.isPunct(index, c.asciiValue!) }

  func skip(_ index: Int, limit: Int) -> Int { min(isOpen(index) ? lexer.skipGroup(index) : index + 1, limit) }

  /// The source text of tokens `range`, spaced after commas and colons.
  func text(_ range: Range<Int>) -> String {
    var out = ""
    for k in range {
      out += lexer.text(at: k)
      if p(k, ",") || p(k, ":") { out += " " }
    }
    return out.hasSuffix(" ") ? String(out.dropLast()) : out
  }

  /// A declaration: its attributes, modifiers, and where its core keyword is.
  struct Decl {
    var range: Range<Int>
    var attributes: [(name: String, args: Range<Int>?)] = []
    var modifiers: [String] = []
    var core: Int
  }

  /// Splits `range` (the inside of a body) into declarations.
  func declarations(_ range: Range<Int>) -> [Decl] {
    var decls: [Decl] = []
    var current: Decl?
    var coreSeen = false
    var k = range.lowerBound
    let hi = range.upperBound
    func continues(_ k: Int) -> Bool {
      let prev = k - 1
      for c: Character in ["=", ",", ":", ".", "&", "|", "+", "*", "\\"] where p(prev, c) { return true }
      if p(prev, ">") && p(prev - 1, "-") { return true }
      for c: Character in [".", "{", "=", ":", "&", "|", "?"] where p(k, c) { return true }
      return (p(k, "-") && p(k + 1, ">")) || isIdent(k, "where")
    }
    while k < hi {
      if p(k, ";") {
        if let c = current { decls.append(c) }
        current = nil
        k += 1
        continue
      }
      if let c = current, coreSeen, tokens[k].firstOnLine, !continues(k) {
        decls.append(c)
        current = nil
      }
      if current == nil {
        current = Decl(range: k..<k, core: k)
        coreSeen = false
      }
      if !coreSeen && p(k, "@") && isIdent(k + 1) {
        var name = lexer.text(at: k + 1)
        var j = k + 2
        while p(j, "."), isIdent(j + 1) {
          name += "." + lexer.text(at: j + 1)
          j += 2
        }
        var args: Range<Int>?
        if p(j, "("), j < hi, !tokens[j].firstOnLine {
          let end = min(lexer.skipGroup(j), hi)
          args = (j + 1)..<max(j + 1, end - 1)
          j = end
        }
        current!.attributes.append((name, args))
        k = j
        current!.core = k
        current!.range = current!.range.lowerBound..<k
        continue
      }
      if !coreSeen, isIdent(k), Self.isModifier(lexer.text(at: k), next: lexer.text(at: k + 1)) {
        current!.modifiers.append(lexer.text(at: k))
        k += 1
        if p(k, "("), isIdent(k + 1, "set") { k = min(lexer.skipGroup(k), hi) }
        current!.core = k
        current!.range = current!.range.lowerBound..<k
        continue
      }
      if !coreSeen {
        current!.core = k
        coreSeen = true
      }
      k = skip(k, limit: hi)
      current!.range = current!.range.lowerBound..<k
    }
    if let c = current { decls.append(c) }
    return decls
  }

  static func isModifier(_ word: String, next: String) -> Bool {
    guard SwiftDataReader.modifiers.contains(word) else { return false }
    if word == "class" || word == "optional" {
      return ["var", "let", "func", "subscript", "static", "final", "override", "class", "public", "private", "internal", "open"].contains(next)
    }
    return true
  }

  /// The first `{` of a declaration (its body), as the range inside the braces.
  func body(of decl: Decl) -> Range<Int>? {
    var k = decl.core
    while k < decl.range.upperBound {
      if p(k, "{") {
        let close = lexer.match[k] ?? tokens.count
        return (k + 1)..<max(k + 1, min(close, decl.range.upperBound))
      }
      k = p(k, "(") || p(k, "[") ? skip(k, limit: decl.range.upperBound) : k + 1
    }
    return nil
  }

  /// The names after `:` in a type declaration's header (its conformances).
  func conformances(of decl: Decl) -> [String] {
    var names: [String] = []
    var k = decl.core
    var after = false
    while k < decl.range.upperBound && !p(k, "{") {
      if p(k, ":") { after = true }
      if after, isIdent(k) { names.append(lexer.text(at: k)) }
      k += 1
    }
    return names
  }

  mutating func scan(_ range: Range<Int>, schema: String?, depth: Int, into reader: inout SwiftDataReader) {
    guard depth <= SwiftDataReader.maximumNesting else {
      reader.log.note(location(range.lowerBound), "unreadable-source", "Declarations nested this deeply are not read.")
      return
    }
    for decl in declarations(range) {
      let keyword = lexer.text(at: decl.core)
      let isModel = decl.attributes.contains { $0.name == "Model" || $0.name == "SwiftData.Model" }
      switch keyword {
      case "class", "actor":
        guard isIdent(decl.core + 1) else { continue }
        let name = lexer.text(at: decl.core + 1)
        if isModel {
          readModel(decl, name: name, schema: schema, into: &reader)
        }
      case "enum", "struct", "extension", "protocol":
        guard isIdent(decl.core + 1) else { continue }
        var name = lexer.text(at: decl.core + 1)
        var j = decl.core + 2
        while p(j, "."), isIdent(j + 1) {
          name = lexer.text(at: j + 1)
          j += 2
        }
        let conforms = conformances(of: decl)
        var inner = schema
        if keyword == "extension" {
          reader.extensions.append((name, location(decl.range.lowerBound)))
        } else if keyword == "enum" && conforms.contains("VersionedSchema") {
          inner = name
          reader.schemas.append(readSchema(decl, name: name))
        } else if keyword != "protocol" && !conforms.contains("SchemaMigrationPlan") {
          reader.valueTypes.insert(name)
        }
        if keyword != "protocol", !conforms.contains("SchemaMigrationPlan"), let body = body(of: decl) {
          scan(body, schema: inner, depth: depth + 1, into: &reader)
        }
      default:
        continue
      }
    }
  }

  func readSchema(_ decl: Decl, name: String) -> SwiftSchema {
    var schema = SwiftSchema(name: name, location: location(decl.range.lowerBound))
    guard let body = body(of: decl) else { return schema }
    for inner in declarations(body) {
      let r = inner.core..<inner.range.upperBound
      if let at = r.first(where: { isIdent($0, "versionIdentifier") }) {
        var numbers: [Int] = []
        for k in at..<r.upperBound where tokens[k].kind == .number {
          if let v = Int(lexer.text(at: k)) { numbers.append(v) }
        }
        if !numbers.isEmpty { schema.version = Array(numbers.prefix(3)) + Array(repeating: 0, count: max(0, 3 - numbers.count)) }
      }
      if r.contains(where: { isIdent($0, "models") }) {
        var refs: [(String?, String)] = []
        for k in r where isIdent(k, "self") && p(k - 1, ".") && isIdent(k - 2) {
          let qualifier = p(k - 3, ".") && isIdent(k - 4) ? lexer.text(at: k - 4) : nil
          refs.append((qualifier, lexer.text(at: k - 2)))
        }
        schema.models = refs.map { (qualifier: $0.0, name: $0.1) }
      }
    }
    return schema
  }

  func readModel(_ decl: Decl, name: String, schema: String?, into reader: inout SwiftDataReader) {
    var model = SwiftModel(name: name, location: location(decl.range.lowerBound), schema: schema)
    guard let body = body(of: decl) else {
      reader.log.note(model.location, "unreadable-source", "The body of @Model class \(name) could not be found; it is read as having no fields.")
      reader.models.append(model)
      return
    }
    for member in declarations(body) {
      let keyword = lexer.text(at: member.core)
      let at = location(member.range.lowerBound)
      switch keyword {
      case "var", "let":
        if member.modifiers.contains("static") || member.modifiers.contains("class") { continue }
        if member.attributes.contains(where: { $0.name == "Transient" }) { continue }
        if member.modifiers.contains("lazy") {
          reader.log.note(at, "unreadable-source", "The lazy property in \(name) is not stored by SwiftData; it is not read.")
          continue
        }
        if let property = readProperty(member, model: name, into: &reader) { model.properties.append(property) }
      case "func", "init", "deinit", "subscript", "typealias", "case", "associatedtype", "import":
        continue
      case "class", "struct", "enum", "actor", "protocol", "extension":
        if isIdent(member.core + 1), keyword == "struct" || keyword == "enum" { reader.valueTypes.insert(lexer.text(at: member.core + 1)) }
      case "#":
        let macro = lexer.text(at: member.core + 1)
        if macro == "Unique" {
          let constraints = keyPathLists(member.core..<member.range.upperBound)
          if constraints.isEmpty {
            reader.log.note(at, "unreadable-source", "This #Unique could not be read; it is ignored.")
          }
          for fields in constraints { model.uniqueness.append(RawUniqueness(fields: fields, location: at, fromAttribute: false, entity: name)) }
        } else if macro == "Index" {
          reader.log.note(at, "index-ignored", "#Index in \(name) is ignored: indexes do not change what syncs.")
        } else if !["if", "elseif", "else", "endif", "warning", "error", "sourceLocation"].contains(macro) {
          reader.log.note(at, "unreadable-source", "This #\(macro) in \(name) is not understood; it is ignored.")
        }
      default:
        reader.log.note(at, "unreadable-source", "This line of \(name) is not understood as a declaration; it is ignored.")
      }
    }
    reader.models.append(model)
  }

  /// The key paths of each `[\.a, \.b]` list in `range` (`#Unique<T>([\.a, \.b], [\.c])`).
  func keyPathLists(_ range: Range<Int>) -> [[String]] {
    var lists: [[String]] = []
    var k = range.lowerBound
    while k < range.upperBound {
      if p(k, "[") {
        let end = min(lexer.skipGroup(k), range.upperBound)
        var fields: [String] = []
        var last: String?
        for j in (k + 1)..<max(k + 1, end) {
          if p(j, "\\") { last = nil }
          if isIdent(j), p(j - 1, ".") { last = lexer.text(at: j) }
          if p(j, ",") || j == end - 1 {
            if let l = last { fields.append(l) }
            last = nil
          }
        }
        if !fields.isEmpty { lists.append(fields) }
        k = end
      } else {
        k += 1
      }
    }
    return lists
  }

  /// The comma-separated arguments of an attribute, as token ranges.
  func arguments(_ range: Range<Int>) -> [Range<Int>] {
    var out: [Range<Int>] = []
    var start = range.lowerBound
    var k = start
    while k < range.upperBound {
      if p(k, ",") {
        out.append(start..<k)
        start = k + 1
        k += 1
      } else {
        k = skip(k, limit: range.upperBound)
      }
    }
    if start < range.upperBound { out.append(start..<range.upperBound) }
    return out
  }

  func readProperty(_ member: Decl, model: String, into reader: inout SwiftDataReader) -> SwiftProperty? {
    let at = location(member.range.lowerBound)
    let end = member.range.upperBound
    var k = member.core + 1
    guard isIdent(k) else {
      reader.log.note(at, "unreadable-source", "This property of \(model) is not a simple name; it is not read.")
      return nil
    }
    var property = SwiftProperty(name: lexer.text(at: k), location: at)
    k += 1
    if p(k, ",") {
      reader.log.note(at, "unreadable-source", "Several properties in one declaration are not read; declare one per line.")
      return nil
    }
    var typeRange: Range<Int>?
    var defaultRange: Range<Int>?
    var accessor: Int?
    if p(k, ":") {
      let s = k + 1
      k = s
      while k < end && !p(k, "=") && !p(k, "{") { k = skip(k, limit: end) }
      typeRange = s..<k
    }
    if p(k, "=") {
      let s = k + 1
      k = s
      while k < end {
        if p(k, "{"), isObserverBlock(k) {
          accessor = k
          break
        }
        k = skip(k, limit: end)
      }
      defaultRange = s..<k
    } else if p(k, "{") {
      accessor = k
    }
    if let accessor, defaultRange == nil, !isObserverBlock(accessor) { return nil }  // computed
    if let typeRange, !typeRange.isEmpty {
      property.shape = SwiftTypeShape(text(typeRange).replacingOccurrences(of: " ", with: ""))
    }
    if let defaultRange, !defaultRange.isEmpty { property.defaultValue = defaultValue(defaultRange) }
    if property.shape == nil {
      switch property.defaultValue {
      case .string: property.shape = SwiftTypeShape("String")
      case .int: property.shape = SwiftTypeShape("Int")
      case .double: property.shape = SwiftTypeShape("Double")
      case .bool: property.shape = SwiftTypeShape("Bool")
      default:
        reader.log.note(at, "unreadable-source", "The type of \(model).\(property.name) could not be read; write it out (`var \(property.name): T`).")
        return nil
      }
    }
    for attribute in member.attributes {
      switch attribute.name {
      case "Attribute":
        let args = (attribute.args.map(arguments) ?? []).filter { !$0.isEmpty }
        if args.count == 1, p(args[0].lowerBound, "."), isIdent(args[0].lowerBound + 1, "unique") { property.uniqueAlone = true }
        for arg in args {
          if p(arg.lowerBound, "."), isIdent(arg.lowerBound + 1) {
            let option = lexer.text(at: arg.lowerBound + 1)
            switch option {
            case "unique": property.unique = true
            case "externalStorage", "allowsCloudEncryption", "preserveValueOnDeletion", "spotlight", "encrypt", "transformable", "ephemeral":
              break
            default:
              reader.log.note(
                at, "unreadable-source", "The attribute option .\(option) on \(model).\(property.name) is not understood; it is ignored.")
            }
          } else if isIdent(arg.lowerBound, "originalName"), p(arg.lowerBound + 1, ":"), arg.lowerBound + 2 < tokens.count {
            property.originalName = lexer.stringValue(tokens[arg.lowerBound + 2])
          } else if !isIdent(arg.lowerBound, "hashModifier") {
            reader.log.note(
              at, "unreadable-source", "The attribute argument `\(text(arg))` on \(model).\(property.name) is not understood; it is ignored.")
          }
        }
      case "Relationship":
        property.isRelationship = true
        for arg in attribute.args.map(arguments) ?? [] where !arg.isEmpty {
          let label = isIdent(arg.lowerBound) && p(arg.lowerBound + 1, ":") ? lexer.text(at: arg.lowerBound) : nil
          switch label {
          case "deleteRule":
            let value = arg.last.map { lexer.text(at: $0) } ?? ""
            switch value {
            case "cascade": property.deleteRule = .cascade
            case "nullify": property.deleteRule = .nullify
            case "deny": property.deleteRule = .deny
            case "noAction": property.deleteRule = .noAction
            default: reader.log.note(at, "unreadable-source", "The delete rule `\(text(arg))` on \(model).\(property.name) is not understood.")
            }
          case "inverse":
            property.inverse = arg.last(where: { isIdent($0) }).map { lexer.text(at: $0) }
          case "originalName":
            property.originalName = arg.last.flatMap { lexer.stringValue(tokens[$0]) }
          case "minimumModelCount", "maximumModelCount", "hashModifier":
            break
          default:
            if p(arg.lowerBound, "."), isIdent(arg.lowerBound + 1, "unique") {
              property.unique = true
            } else {
              reader.log.note(
                at, "unreadable-source", "The relationship argument `\(text(arg))` on \(model).\(property.name) is not understood; it is ignored.")
            }
          }
        }
      case "Transient":
        return nil
      default:
        reader.log.note(at, "unreadable-source", "The attribute @\(attribute.name) on \(model).\(property.name) is not understood; it is ignored.")
      }
    }
    return property
  }

  func isObserverBlock(_ open: Int) -> Bool { isIdent(open + 1, "didSet") || isIdent(open + 1, "willSet") }

  func defaultValue(_ range: Range<Int>) -> SwiftDefault {
    let count = range.count
    let first = range.lowerBound
    if count == 1 {
      let t = tokens[first]
      switch t.kind {
      case .string:
        if let s = lexer.stringValue(t) { return .string(s) }
      case .number:
        if let v = Self.integer(lexer.text(t)) { return .int(v) }
        if let v = Self.floating(lexer.text(t)) { return .double(v) }
      case .identifier:
        switch lexer.text(t) {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "nil": return .nilLiteral
        default: break
        }
      case .punct:
        break
      }
    } else if count == 2, p(first, "-"), tokens[first + 1].kind == .number {
      if let v = Self.integer("-" + lexer.text(at: first + 1)) { return .int(v) }
      if let v = Self.floating(lexer.text(at: first + 1)) { return .double(-v) }
    }
    let written = text(range)
    return .other(written.count > 60 ? String(written.prefix(57)) + "..." : written)
  }

  /// A decimal Swift floating-point literal (`0.5`, `1e3`, `1_000.25`), if it is a finite
  /// double. (Hexadecimal ones, `0x1p4`, are left as written.)
  static func floating(_ literal: String) -> Double? {
    let s = literal.replacingOccurrences(of: "_", with: "")
    guard !s.hasPrefix("0x"), s.first?.isNumber == true, let v = Double(s), v.isFinite else { return nil }
    return v
  }

  /// A Swift integer literal (`42`, `-7`, `1_000`, `0x1F`), if it is one that fits 64 bits.
  static func integer(_ literal: String) -> Int64? {
    var s = literal.replacingOccurrences(of: "_", with: "")
    var negative = false
    if s.hasPrefix("-") {
      negative = true
      s.removeFirst()
    }
    var radix = 10
    for (prefix, r) in [("0x", 16), ("0o", 8), ("0b", 2)] where s.hasPrefix(prefix) {
      radix = r
      s.removeFirst(2)
    }
    guard !s.isEmpty, let magnitude = UInt64(s, radix: radix) else { return nil }
    if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
    return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
  }
}
