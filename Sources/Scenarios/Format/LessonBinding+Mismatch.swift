import Replica

/// The sentence that says which role an app's schema lacks: in the lesson's terms (`a record
/// type with a text field that is appended to (its Note's body)`), then what the schema has.
extension _LessonSearch {
  /// The part a lesson field plays, by the kinds that can play it.
  enum Role: Equatable {
    /// A lesson `string`: a string, int, date or text field.
    case scalar
    /// A lesson `int` or `date`: an int, date or string field.
    case number
    /// A lesson `text`: a text field.
    case text
    /// A lesson `bool`: a bool field.
    case bool
    /// A lesson `ref T`: a reference to the type that plays `T`.
    case reference(String)
    /// A lesson `asset`: an asset field.
    case asset

    init(_ kind: FieldKind) {
      switch kind {
      case .string, .bytes: self = .scalar
      case .asset: self = .asset
      case .int, .date, .double: self = .number
      case .text: self = .text
      case .bool: self = .bool
      case .ref(let target): self = .reference(target)
      }
    }

    /// Whether an app field of `kind` can play it (a reference to any type).
    func accepts(_ kind: FieldKind) -> Bool {
      let lesson: FieldKind =
        switch self {
        case .scalar: .string
        case .number: .int
        case .text: .text
        case .bool: .bool
        case .reference(let target): .ref(target)
        case .asset: .asset
        }
      return _LessonSearch.kindPoints(lesson, kind, refs: nil) > 0
    }

    /// `string, int, date or text field`, `text field`, … (`plural`: `fields`).
    func noun(plural: Bool) -> String {
      let s = plural ? "s" : ""
      return switch self {
      case .scalar: "string, int, date or text field\(s)"
      case .number: "int, date or string field\(s)"
      case .text: "text field\(s)"
      case .bool: "bool field\(s)"
      case .reference: "reference field\(s)"
      case .asset: "asset field\(s)"
      }
    }

    /// The noun with its article: `a text field`, `an int, date or string field`.
    var withArticle: String { (self == .number ? "an " : "a ") + noun(plural: false) }
  }

  /// Used fields that play the same role, in the order of the first.
  struct Group {
    var role: Role
    var fields: [_LessonUses.Field]
  }

  /// The used type's fields, grouped by role in the order of each role's first field.
  static func groups(_ used: _LessonUses.UsedType) -> [Group] {
    var groups: [Group] = []
    for field in used.fields {
      let role = Role(field.spec.kind)
      if let g = groups.firstIndex(where: { $0.role == role }) {
        groups[g].fields.append(field)
      } else {
        groups.append(Group(role: role, fields: [field]))
      }
    }
    return groups
  }

  // MARK: - The sentence

  /// Why no plan exists: the first used type no app type can play, and the role it lacks; or,
  /// when each can be played alone, that they cannot all be played at once.
  mutating func mismatch(lesson: String, app appName: String) -> String {
    nodes = 0
    for i in uses.types.indices {
      let used = uses.types[i]
      let fitting = app.types.indices.filter { structuralProblem(used, app.types[$0]) == nil }
      guard !fitting.contains(where: { bestFields(i, on: $0, refs: nil) != nil }) else { continue }
      return typeMismatch(used, fitting: fitting, lesson: lesson, app: appName)
    }
    return jointMismatch(lesson: lesson, app: appName)
  }

  /// No app type plays `used`: the first of its roles no type has room for, else the whole
  /// type's role with what each app type has.
  func typeMismatch(_ used: _LessonUses.UsedType, fitting: [Int], lesson: String, app appName: String) -> String {
    let groups = Self.groups(used)
    let needs = "\(lesson) needs \(Self.typeNoun(used.spec))"
    for group in groups where !fitting.contains(where: { count(group.role, in: app.types[$0]) >= group.fields.count }) {
      return "\(needs) with \(phrase(group, of: used.spec.name)); \(appName)'s schema " + tail(group, of: used, fitting: fitting)
    }
    let listing = app.types.indices.map { a in
      let type = app.types[a]
      guard fitting.contains(a) else { return "\(type.name) \(structuralProblem(used, type) ?? "does not fit")" }
      return "\(type.name) has "
        + groups.map { group in
          let names = type.fields.filter { group.role.accepts($0.kind) }.map(\.name)
          return names.isEmpty
            ? "no \(group.role.noun(plural: false))"
            : "\(Self.word(names.count)) \(group.role.noun(plural: names.count > 1)) (\(names.joined(separator: ", ")))"
        }.joined(separator: " and ")
    }
    let role = groups.isEmpty ? " (its \(used.spec.name))" : " with " + Self.phrases(groups.map { phrase($0, of: used.spec.name) })
    return needs + role + "; \(appName)'s schema has none: " + listing.joined(separator: ", ")
  }

  /// What the schema has for a role no fitting type has room for: nothing at all, only types
  /// that do not fit, or too few fields on each type.
  func tail(_ group: Group, of used: _LessonUses.UsedType, fitting: [Int]) -> String {
    let role = group.role
    let holders = app.types.indices.filter { count(role, in: app.types[$0]) > 0 }
    if holders.isEmpty { return "has no \(role.noun(plural: false))" }
    if !holders.contains(where: fitting.contains) {
      let reasons = holders.map { a in "\(app.types[a].name) \(structuralProblem(used, app.types[a]) ?? "does not fit")" }
      return "has \(role.withArticle) only on types that do not fit: " + reasons.joined(separator: ", ")
    }
    let listing = app.types.indices.map { a in
      let type = app.types[a]
      guard fitting.contains(a) else { return "\(type.name) \(structuralProblem(used, type) ?? "does not fit")" }
      let names = type.fields.filter { role.accepts($0.kind) }.map(\.name)
      let others = type.fields.filter { !role.accepts($0.kind) }.map { "\($0.name) is \(TimelineParser.article($0.kind))" }
      let detail = [names.joined(separator: ", "), others.joined(separator: ", ")].filter { !$0.isEmpty }.joined(separator: "; ")
      return "\(type.name) has \(names.isEmpty ? "none" : Self.word(names.count))" + (detail.isEmpty ? "" : " (\(detail))")
    }
    return "has none: " + listing.joined(separator: ", ")
  }

  /// Each used type can be played alone, but no distinct types play them all (or the search
  /// ran out of steps).
  mutating func jointMismatch(lesson: String, app appName: String) -> String {
    let count = uses.types.count
    var refers: [String] = []
    for used in uses.types {
      for field in used.fields {
        if let target = field.spec.referencedType {
          refers.append("its \(used.spec.name)'s \(field.spec.name) referring to its \(target) (on-delete \(field.spec.onDelete.rawValue))")
        }
      }
    }
    var fits: [String] = []
    for i in uses.types.indices {
      let names = app.types.indices.filter { a in
        structuralProblem(uses.types[i], app.types[a]) == nil && bestFields(i, on: a, refs: nil) != nil
      }.map { app.types[$0].name }
      fits.append("its \(uses.types[i].spec.name) fits " + Self.listed(names, or: true))
    }
    return "\(lesson) needs \(Self.word(count)) distinct record types, as "
      + Self.listed(uses.types.map { "its \($0.spec.name)" })
      + (refers.isEmpty ? "" : ", with " + Self.listed(refers))
      + "; \(appName)'s schema has no \(count == 2 ? "pair" : "set") of types that plays them: " + fits.joined(separator: ", ")
  }

  // MARK: - Words

  /// How many fields of `type` can play `role`.
  func count(_ role: Role, in type: RecordType) -> Int { type.fields.filter { role.accepts($0.kind) }.count }

  /// `a record type`, `an append-only record type`, `a singleton record type`, `a record type
  /// unique by title`.
  static func typeNoun(_ type: RecordType) -> String {
    switch (type.appendOnly, type.uniqueness) {
    case (true, _): "an append-only record type"
    case (false, .singleton?): "a singleton record type"
    case (false, .fields(let unique)?): "a record type unique by " + listed(unique.map { type.fields[$0].name })
    case (false, nil): "a record type"
    }
  }

  /// A group's role, with the lesson fields that play it: `two editable fields (string, int,
  /// date or text), as its Note's title and tag`, `a text field that is appended to (its Note's
  /// body)`.
  func phrase(_ group: Group, of typeName: String) -> String {
    let n = group.fields.count
    let edited = group.fields.contains { $0.edited }
    let appended = group.fields.contains { $0.appended }
    let head: String
    switch group.role {
    case .scalar, .number:
      let kinds = group.role == .scalar ? "string, int, date or text" : "int, date or string"
      let noun = (edited ? "editable " : "") + (n == 1 ? "field" : "fields")
      head = (n == 1 ? (edited ? "an " : "a ") : "\(Self.word(n)) ") + noun + " (\(kinds))"
    case .text:
      head = (n == 1 ? "a text field" : "\(Self.word(n)) text fields") + (appended ? (n == 1 ? " that is appended to" : " that are appended to") : "")
    case .bool:
      head = n == 1 ? "a bool field" : "\(Self.word(n)) bool fields"
    case .asset:
      head = n == 1 ? "an asset field" : "\(Self.word(n)) asset fields"
    case .reference(let target):
      let rules = Set(group.fields.map(\.spec.onDelete))
      let rule = rules.count == 1 ? " with on-delete \(rules.first!.rawValue)" : ""
      head = (n == 1 ? "a reference" : "\(Self.word(n)) references") + " to the type that plays its \(target)\(rule)"
    }
    let names = "its \(typeName)'s " + Self.listed(group.fields.map(\.spec.name))
    return head.hasSuffix(")") ? head + ", as " + names : head + " (\(names))"
  }

  /// Role phrases joined: with `, and` once a phrase has an `as` clause (whose own list has
  /// an `and`).
  static func phrases(_ parts: [String]) -> String {
    guard parts.count > 1 else { return parts.first ?? "" }
    let comma = parts.contains { $0.contains(", as ") }
    return parts.dropLast().joined(separator: ", ") + (comma ? ", and " : " and ") + parts[parts.count - 1]
  }

  /// `a`, `a and b`, `a, b and c` (`or` with `or`); `nothing` for none.
  static func listed(_ items: [String], or: Bool = false) -> String {
    guard let last = items.last else { return "nothing" }
    guard items.count > 1 else { return last }
    return items.dropLast().joined(separator: ", ") + (or ? " or " : " and ") + last
  }

  /// `one` … `ten`, then digits.
  static func word(_ n: Int) -> String {
    let words = ["none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    return n >= 0 && n < words.count ? words[n] : String(n)
  }
}
