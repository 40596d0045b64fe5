/// Turns raw model versions into the scenario types of the latest version, with the findings.
struct ModelBuilder {
  var log: FindingLog
  let source: ModelSource
  static let maximumFields = 64

  /// A property of the latest version, with its entity.
  struct Member {
    var entityIndex: Int
    var propertyIndex: Int
    var entity: String
    var property: RawProperty
  }

  mutating func build(versions: [RawVersion], versionNames: [String], origin: String) -> ImportedModel {
    guard let latest = versions.last else {
      return ImportedModel(source: source, origin: origin, versions: versionNames, types: [], findings: sorted(log.findings))
    }
    var typeNames: [String: String] = [:]
    var usedTypeNames: Set<String> = []
    for entity in latest.entities where typeNames[entity.name] == nil {
      let name = unique(sanitized(entity.name, at: entity.location, what: "type"), in: &usedTypeNames)
      typeNames[entity.name] = name
    }
    let (typeSince, fieldSince) = versionFindings(versions)
    var types: [ImportedType] = []
    var built: Set<String> = []
    for (entityIndex, entity) in latest.entities.enumerated() {
      guard let typeName = typeNames[entity.name], built.insert(typeName).inserted else { continue }
      let since = typeSince[entity.name] ?? 1
      var type = ImportedType(name: typeName, location: entity.location, since: since, fields: [])
      var usedFieldNames: Set<String> = []
      var fieldNames: [String: String] = [:]
      for (propertyIndex, p) in entity.properties.enumerated() {
        let field = fieldFor(p, in: entity, entityIndex: entityIndex, propertyIndex: propertyIndex, latest: latest, typeNames: typeNames)
        guard var field else { continue }
        if fieldNames[p.name] != nil { continue }
        field.name = unique(sanitized(p.name, at: p.location, what: "field"), in: &usedFieldNames)
        field.since = max(since, fieldSince["\(entity.name).\(p.name)"] ?? 1)
        fieldNames[p.name] = field.name
        type.fields.append(field)
      }
      applyUniqueness(entity, to: &type, fieldNames: fieldNames)
      if type.fields.count > Self.maximumFields {
        // At most 20 names: a deep hierarchy drops thousands per type, and the warnings would
        // grow with the square of the model.
        let dropped = type.fields[Self.maximumFields...].prefix(20).map(\.name)
        let more = type.fields.count - Self.maximumFields - dropped.count
        log.warning(
          type.fields[Self.maximumFields].location, "too-many-fields",
          "\(type.name) has \(type.fields.count) fields; a scenario type holds at most \(Self.maximumFields), so \(dropped.joined(separator: ", "))\(more > 0 ? " and \(more) more" : "") are left out.",
          apple: "",
          fix: "split the model, or edit the scenario to keep the fields whose conflicts matter")
        type.fields.removeLast(type.fields.count - Self.maximumFields)
        type.uniqueBy = type.uniqueBy.filter { u in type.fields.contains { $0.name == u } }
      }
      types.append(type)
    }
    return ImportedModel(source: source, origin: origin, versions: versionNames, types: types, findings: sorted(log.findings))
  }

  func sorted(_ findings: [ImportFinding]) -> [ImportFinding] {
    var seen: Set<ImportFinding> = []
    let sorted = findings.filter { seen.insert($0).inserted }.sorted { a, b in
      if a.location != b.location { return a.location < b.location }
      if a.rule != b.rule { return a.rule < b.rule }
      return a.message < b.message
    }
    return reportedOnce(sorted)
  }

  /// One finding per declaration: an attribute or constraint an entity declares is copied into
  /// every entity that inherits it, and each copy's finding differs only in the name it starts
  /// with (`Book.title is …`, `Film.title is …`, at the parent's line). The first is kept and
  /// says which other entities inherit the declaration. (Sorted input: such findings are
  /// adjacent.)
  func reportedOnce(_ findings: [ImportFinding]) -> [ImportFinding] {
    func split(_ message: String) -> (name: Substring, rest: Substring) {
      guard let space = message.firstIndex(of: " ") else { return (message[...], "") }
      return (message[..<space], message[space...])
    }
    var out: [ImportFinding] = []
    var others: [Substring] = []
    func flush() {
      guard !others.isEmpty, var last = out.popLast() else { return }
      last.message += " The same declaration is inherited by \(others.joined(separator: ", ")): reported once."
      out.append(last)
      others = []
    }
    for f in findings {
      // (Not `too-many-fields`: it is about each entity, though placed at the first field left out.)
      if let last = out.last, last.location == f.location, last.severity == f.severity, last.rule == f.rule, f.rule != "too-many-fields",
        split(last.message).rest == split(f.message).rest, split(last.message).name != split(f.message).name
      {
        others.append(split(f.message).name)
        continue
      }
      flush()
      out.append(f)
    }
    flush()
    return out
  }

  // MARK: Names

  /// A name of the scenario grammar (`[A-Za-z][A-Za-z0-9_-]*`), with a note when it changes.
  mutating func sanitized(_ name: String, at location: SourceLocation, what: String) -> String {
    var out = ""
    for s in name.unicodeScalars {
      let ok = (s >= "A" && s <= "Z") || (s >= "a" && s <= "z") || (s >= "0" && s <= "9") || s == "_" || s == "-"
      if out.isEmpty && !((s >= "A" && s <= "Z") || (s >= "a" && s <= "z")) { continue }
      out.unicodeScalars.append(ok ? s : "_")
    }
    if out.isEmpty { out = what == "type" ? "Type" : "field" }
    if out != name {
      log.note(location, "name-sanitized", "The \(what) name \(name) is not a scenario name ([A-Za-z][A-Za-z0-9_-]*); it is written as \(out).")
    }
    return out
  }

  func unique(_ name: String, in used: inout Set<String>) -> String {
    var candidate = name
    var n = 2
    while used.contains(candidate) {
      candidate = "\(name)_\(n)"
      n += 1
    }
    used.insert(candidate)
    return candidate
  }

  // MARK: Versions

  /// The first version (from 1) of each type and field of the latest version, and the warnings
  /// about removed, renamed and changed ones.
  mutating func versionFindings(_ versions: [RawVersion]) -> (types: [String: Int], fields: [String: Int]) {
    var typeSince: [String: Int] = [:]
    var fieldSince: [String: Int] = [:]
    guard let latest = versions.last else { return ([:], [:]) }
    for entity in latest.entities {
      for p in entity.properties where p.originalName != nil {
        let old = p.originalName!
        log.warning(
          p.location, "field-renamed",
          "\(entity.name).\(p.name) was renamed from \(old): CloudKit sees a new field \(p.name), and old app versions keep writing \(old).",
          apple: AppleRule.schemaAdditive,
          fix: "keep the old name in the schema (rename only in code, with `originalName`) or keep writing both fields until every device has updated"
        )
      }
    }
    guard versions.count >= 2 else { return ([:], [:]) }
    for entity in latest.entities {
      typeSince[entity.name] = (versions.firstIndex { $0.entities.contains { $0.name == entity.name } } ?? versions.count - 1) + 1
      for p in entity.properties {
        let names = [p.name] + (p.originalName.map { [$0] } ?? [])
        var first: Int?
        var changed: (version: Int, kind: String)?
        for (i, v) in versions.enumerated() {
          guard let old = v.entities.first(where: { $0.name == entity.name })?.properties.first(where: { names.contains($0.name) }) else { continue }
          if first == nil { first = i + 1 }
          if i < versions.count - 1 && !sameKind(old, p) { changed = (i + 1, old.typeText) }
        }
        fieldSince["\(entity.name).\(p.name)"] = first ?? versions.count
        if let changed {
          log.warning(
            p.location, "field-kind-changed",
            "\(entity.name).\(p.name) was \(changed.kind) in version \(changed.version) and is \(p.typeText) now: CloudKit keeps the old field type, and old app versions write the old kind.",
            apple: AppleRule.schemaAdditive,
            fix: "add a new field with the new type and migrate the values in code; keep the old field")
        }
      }
    }
    // Types and fields present before and missing now: the last location each was seen.
    var removedTypes: [(name: String, location: SourceLocation)] = []
    var removedFields: [(key: String, location: SourceLocation)] = []
    for v in versions.dropLast() {
      for e in v.entities {
        guard let now = latest.entities.first(where: { $0.name == e.name }) else {
          if let k = removedTypes.firstIndex(where: { $0.name == e.name }) {
            removedTypes[k].location = e.location
          } else {
            removedTypes.append((e.name, e.location))
          }
          continue
        }
        for q in e.properties where !now.properties.contains(where: { $0.name == q.name || $0.originalName == q.name }) {
          let key = "\(e.name).\(q.name)"
          if let k = removedFields.firstIndex(where: { $0.key == key }) {
            removedFields[k].location = q.location
          } else {
            removedFields.append((key, q.location))
          }
        }
      }
    }
    for t in removedTypes {
      log.warning(
        t.location, "type-removed",
        "\(t.name) was in an older version and is gone from the latest: CloudKit keeps the record type, and old app versions keep writing it.",
        apple: AppleRule.schemaAdditive, fix: "keep \(t.name) in the model (unused) until no old app version can sync")
    }
    for f in removedFields {
      log.warning(
        f.location, "field-removed",
        "\(f.key) was in an older version and is gone from the latest: CloudKit keeps the field, and old app versions keep writing it.",
        apple: AppleRule.schemaAdditive, fix: "keep the field in the model (unused, optional) until no old app version can sync")
    }
    return (typeSince, fieldSince)
  }

  func sameKind(_ a: RawProperty, _ b: RawProperty) -> Bool {
    switch (a.kind, b.kind) {
    case (.relationship(let x, let m), .relationship(let y, let n)): x == y && m == n
    default: a.kind.scenarioKind == b.kind.scenarioKind
    }
  }

  // MARK: Fields

  func entity(_ name: String, in version: RawVersion) -> (index: Int, entity: RawEntity)? {
    guard let i = version.entities.firstIndex(where: { $0.name == name }) else { return nil }
    return (i, version.entities[i])
  }

  /// The relationship on the other side of `p` (declared by either side, or inferred for
  /// SwiftData when there is exactly one candidate each way).
  func partner(of p: RawProperty, in e: RawEntity, latest: RawVersion) -> (entity: RawEntity, property: RawProperty, index: Int, inferred: Bool)? {
    guard case .relationship(let destination, _) = p.kind, let (yi, y) = entity(destination, in: latest) else { return nil }
    func targets(_ q: RawProperty, _ name: String) -> Bool {
      if case .relationship(let t, _) = q.kind { return t == name }
      return false
    }
    if let inverse = p.inverse {
      if let s = y.properties.first(where: { $0.name == inverse && targets($0, e.name) }) { return (y, s, yi, false) }
      return nil
    }
    if let s = y.properties.first(where: { $0.inverse == p.name && targets($0, e.name) && !(y.name == e.name && $0.name == p.name) }) {
      return (y, s, yi, false)
    }
    guard source == .swiftData else { return nil }
    let claimed = Set(e.properties.compactMap(\.inverse))
    let candidates = y.properties.filter {
      targets($0, e.name) && $0.inverse == nil && !claimed.contains($0.name) && !(y.name == e.name && $0.name == p.name)
    }
    let mine = e.properties.filter { m in targets(m, y.name) && m.inverse == nil && !y.properties.contains { q in q.inverse == m.name } }
    guard candidates.count == 1, mine.count == 1, y.name != e.name else { return nil }
    return (y, candidates[0], yi, true)
  }

  func swiftZero(_ p: RawProperty) -> String? {
    switch p.kind {
    case .string: "\"\""
    case .int: "0"
    case .bool: "false"
    case .date: ".now"
    default: nil
    }
  }

  mutating func fieldFor(
    _ p: RawProperty, in e: RawEntity, entityIndex: Int, propertyIndex: Int, latest: RawVersion, typeNames: [String: String]
  ) -> ImportedField? {
    let qualified = "\(e.name).\(p.name)"
    let swift = source == .swiftData
    guard case .relationship(let destination, let toMany) = p.kind else {
      var field = ImportedField(name: p.name, location: p.location, kind: p.kind.scenarioKind, optional: p.optional, unique: p.unique)
      if p.hasDefault {
        field.defaultLiteral = p.defaultLiteral ?? p.kind.scenarioKind.zeroLiteral
        if p.defaultLiteral == nil {
          let zero = p.kind.scenarioKind.zeroLiteral ?? ""
          let why =
            p.kind.scenarioKind == .date
            ? "a date default is written as a duration from the start of the run" : "it is not a literal of kind \(field.kind.scenarioName)"
          log.note(
            p.location, "default-approximated",
            "The default `\(p.defaultText ?? "?")` of \(qualified) is kept as \"has a default\" but written as \(zero): \(why).")
        }
      }
      if !p.optional && !p.hasDefault {
        let fix: String
        if swift {
          fix =
            swiftZero(p).map { "make it `var \(p.name): \(p.typeText) = \($0)` or optional (`var \(p.name): \(p.typeText)?`)" }
            ?? "give it a default value (`var \(p.name): \(p.typeText) = …`) or make it optional (`var \(p.name): \(p.typeText)?`)"
        } else {
          fix = "tick Optional for \(qualified) in the model editor, or give it a default value"
        }
        log.warning(
          p.location, "attribute-required",
          "\(qualified) is neither optional nor defaulted: CloudKit cannot require a field, so the store refuses to load with CloudKit enabled, and a record synced without it would be invalid.",
          apple: AppleRule.optionalOrDefault, fix: fix)
      }
      return field
    }
    let destinationName = typeNames[destination]
    if destinationName == nil && !toMany {
      log.note(
        p.location, "unreadable-source",
        "The destination \(destination) of \(qualified) is not a type of the latest version; the relationship is not read.")
      return nil
    }
    if !p.optional {
      let fix =
        swift
        ? (toMany ? "make it `var \(p.name): [\(destination)]? = []`" : "make it `var \(p.name): \(destination)?`")
        : "tick Optional for \(qualified) in the model editor"
      log.warning(
        p.location, "relationship-required",
        "\(qualified) is a required relationship: CloudKit may deliver a record before the one it refers to, so the store refuses to load with CloudKit enabled\(toMany ? "" : "; it is imported as a non-optional reference").",
        apple: AppleRule.optionalRelationships, fix: fix)
    }
    if p.deleteRule == .deny {
      log.warning(
        p.location, "deny-rule",
        "\(qualified) has the Deny delete rule: CloudKit does not enforce it, so another device can still delete the record it protects.",
        apple: AppleRule.deny,
        fix: swift
          ? "use `.nullify` or `.cascade` and check for dependents in code before deleting"
          : "use Nullify or Cascade and check for dependents in code before deleting")
    }
    if p.deleteRule == .noAction {
      log.warning(
        p.location, "no-action-rule",
        "\(qualified) has the No Action delete rule: deleting leaves dangling references on other devices; it is simulated as nullify.",
        apple: "",
        fix: swift ? "use `.nullify` (the default) or `.cascade`" : "use Nullify or Cascade")
    }
    if p.ordered {
      log.warning(
        p.location, "ordered-relationship",
        "\(qualified) is an ordered relationship: CloudKit does not keep an order, and a store with one does not sync; the referring records are imported with `ordered`, so they never upload in a run.",
        apple: AppleRule.ordered, fix: "untick Ordered and store an explicit position attribute (an Integer or a fractional index) on \(destination)")
    }
    let other = partner(of: p, in: e, latest: latest)
    if let inverse = p.inverse, other == nil {
      log.note(
        p.location, "unreadable-source",
        "The inverse \(destination).\(inverse) of \(qualified) is not a relationship back to \(e.name); read as having no inverse.")
    }
    if let other, other.inferred,
      (entityIndex, propertyIndex) < (other.index, other.entity.properties.firstIndex { $0.name == other.property.name } ?? 0)
    {
      log.note(
        p.location, "inverse-inferred",
        "\(qualified) and \(destination).\(other.property.name) declare no inverse; SwiftData pairs them because each is the only candidate.",
        fix: "state it: `@Relationship(inverse: \\\(destination).\(other.property.name))`")
    }
    let fixInverse =
      swift
      ? "add the inverse on \(destination) (`var \(lowerFirst(e.name)): \(e.name)?` for a to-many, with `@Relationship(inverse:)` on one side)"
      : "add an inverse relationship on \(destination) and set it as the inverse of \(qualified)"
    if toMany {
      guard let other else {
        log.warning(
          p.location, "missing-inverse",
          "\(qualified) has no inverse: CloudKit stores references on the child record, and without an inverse there is none; the relationship is not imported.",
          apple: AppleRule.inverses, fix: fixInverse)
        return nil
      }
      if case .relationship(_, true) = other.property.kind {
        if (entityIndex, propertyIndex) <= (other.index, other.entity.properties.firstIndex { $0.name == other.property.name } ?? 0) {
          // A note, not a warning: Core Data's CloudKit store syncs many-to-many relationships
          // (Apple, Reading CloudKit Records for Core Data: it stores a relationship according
          // to its cardinality, a many-to-many one as records of its own); only the simulator
          // leaves them out.
          log.note(
            p.location, "many-to-many",
            "\(qualified) and \(destination).\(other.property.name) are a many-to-many relationship, which CloudKit syncs (as a record of its own per link) but the simulator does not model; it is not imported.",
            fix: "model the link as its own type with a to-one to each side (a join record), if its conflicts matter")
        }
      }
      return nil
    }
    var field = ImportedField(name: p.name, location: p.location, kind: .ref(destinationName!), optional: p.optional, unique: p.unique)
    guard let other else {
      log.warning(
        p.location, "missing-inverse",
        "\(qualified) has no inverse: it is imported as a reference marked `no-inverse`; CloudKit needs the inverse, and a store without one does not sync, so \(e.name) records never upload in a run.",
        apple: AppleRule.inverses, fix: fixInverse)
      childRuleNote(p, qualified)
      field.hasInverse = false
      return field
    }
    field.inverseOf = "\(other.entity.name).\(other.property.name)"
    // The order lives on the to-many side; the reference that represents it carries it.
    if other.property.ordered { field.ordered = true }
    switch other.property.deleteRule ?? .nullify {
    case .cascade: field.onDelete = .cascade
    case .deny: field.onDelete = .deny
    case .nullify, .noAction: field.onDelete = .nullify
    }
    if case .relationship(_, true) = other.property.kind { childRuleNote(p, qualified) }
    return field
  }

  /// A Cascade or Deny rule on a child's to-one (deleting the child acts on the parent): the
  /// scenario format cannot say it.
  mutating func childRuleNote(_ p: RawProperty, _ qualified: String) {
    guard let rule = p.deleteRule, rule == .cascade || rule == .deny, case .relationship(let destination, _) = p.kind else { return }
    log.warning(
      p.location, "child-delete-rule",
      "\(qualified) has the \(rule.sourceName) delete rule, so deleting this record \(rule == .cascade ? "deletes" : "is refused while it has") its \(destination); the scenario format cannot express a rule on this side, so it is not simulated.",
      apple: rule == .deny ? AppleRule.deny : "",
      fix: "put the delete rule on the to-many side (\(destination)'s relationship) and use Nullify here")
  }

  func lowerFirst(_ s: String) -> String { s.prefix(1).lowercased() + s.dropFirst() }

  // MARK: Uniqueness

  mutating func applyUniqueness(_ e: RawEntity, to type: inout ImportedType, fieldNames: [String: String]) {
    var constraints = e.uniqueness
    for p in e.properties where p.unique { constraints.append(RawUniqueness(fields: [p.name], location: p.location, fromAttribute: true)) }
    constraints.sort { $0.location < $1.location }
    for i in type.fields.indices { type.fields[i].unique = false }
    for c in constraints {
      let names = c.fields.compactMap { fieldNames[$0] }
      let listed = c.fields.joined(separator: ", ")
      let fix =
        source == .swiftData
        ? (c.fromAttribute
          ? "remove `.unique` and derive the record name from the key (de-duplicating after the fact loses the duplicate's writes, and can delete both copies)"
          : "remove `#Unique` and derive the record name from the key (de-duplicating after the fact loses the duplicate's writes, and can delete both copies)")
        : "remove the uniqueness constraint and derive the record name from the key (de-duplicating after the fact loses the duplicate's writes, and can delete both copies)"
      log.warning(
        c.location, "unique-constraint",
        "\(e.name) is unique by \(listed): CloudKit cannot enforce it, so two devices can each create a record with the same \(listed) and both survive the sync.",
        apple: AppleRule.unique, fix: fix)
      guard names.count == c.fields.count else {
        log.note(
          c.location, "unreadable-source",
          "The uniqueness constraint on \(listed) names a field that is not imported; it is not written to the scenario.")
        continue
      }
      if names.count == 1, let i = type.fields.firstIndex(where: { $0.name == names[0] }) { type.fields[i].unique = true }
      if type.uniqueBy.isEmpty {
        type.uniqueBy = names
      } else if names.count > 1 || !type.fields.contains(where: { $0.name == names[0] && $0.unique }) {
        log.note(c.location, "unreadable-source", "A scenario type has one unique-by; the constraint on \(listed) is not written to the scenario.")
      }
    }
  }
}

/// Spelling for the scenario format.
enum ScenarioText {
  /// A string literal with `\"`, `\\` and `\n` escaped.
  static func quoted(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
      switch c {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      default: out.unicodeScalars.append(c)
      }
    }
    return out + "\""
  }
}
