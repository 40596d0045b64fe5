/// Reads Core Data model versions (`contents` XML files) into raw versions.
struct CoreDataReader {
  var log = FindingLog()

  static let stringTypes: Set<String> = ["String"]
  static let intTypes: Set<String> = ["Integer 16", "Integer 32", "Integer 64"]
  static let opaqueTypes: Set<String> = ["Decimal", "Double", "Float", "Binary", "UUID", "URI", "Transformable", "ObjectID"]
  static let silentElements: Set<String> = ["elements", "element", "configuration", "fetchRequest", "userInfo", "entry", "memberEntity"]

  /// One version; `report` adds findings (only the latest version's are wanted).
  mutating func read(name: String, file: String, text: String, report: Bool) throws(ImportError) -> RawVersion {
    let document = try XMLReader.parse(text, file: file)
    guard let model = document.children.first(where: { $0.name == "model" }) else {
      throw ImportError(
        reason: .malformed, path: file, location: SourceLocation(file: file, line: 1, column: 1),
        message: "no <model> element: this is not a Core Data model")
    }
    var entities: [RawEntity] = []
    for child in model.children {
      switch child.name {
      case "entity":
        if let entity = readEntity(child, report: report) { entities.append(entity) }
      case _ where Self.silentElements.contains(child.name):
        continue
      default:
        if report { log.note(child.location, "unreadable-source", "The element <\(child.name)> of the model is not understood; it is ignored.") }
      }
    }
    return RawVersion(name: name, entities: flatten(entities, report: report))
  }

  /// Copies each entity's parent's properties into it (parent first); abstract entities are
  /// left out.
  mutating func flatten(_ entities: [RawEntity], report: Bool) -> [RawEntity] {
    var byName: [String: RawEntity] = [:]
    for e in entities where byName[e.name] == nil { byName[e.name] = e }
    var out: [RawEntity] = []
    for e in entities {
      if e.isAbstract {
        if report {
          log.note(
            e.location, "abstract-entity",
            "\(e.name) is abstract: it has no records of its own, so it is not a type; its fields are copied into the entities that inherit from it.")
        }
        continue
      }
      var flat = e
      var inherited: [RawProperty] = []
      var seen: Set<String> = [e.name]
      var parentName = e.parent
      while let name = parentName, !seen.contains(name) {
        seen.insert(name)
        guard let parent = byName[name] else {
          if report { log.note(e.location, "unreadable-source", "The parent entity \(name) of \(e.name) is not in the model; nothing is inherited.") }
          break
        }
        inherited =
          parent.properties.map { p in
            var p = p
            if p.inheritedFrom == nil { p.inheritedFrom = parent.name }
            return p
          } + inherited
        flat.uniqueness += parent.uniqueness
        parentName = parent.parent
      }
      if !inherited.isEmpty {
        if report {
          log.note(
            e.location, "inheritance-flattened",
            "\(e.name) inherits from \(e.parent ?? ""): the parent's fields are copied into it (CloudKit stores the whole hierarchy as one record type)."
          )
        }
        let own = Set(flat.properties.map(\.name))
        flat.properties = inherited.filter { !own.contains($0.name) } + flat.properties
      }
      out.append(flat)
    }
    return out
  }

  mutating func readEntity(_ element: XMLTag, report: Bool) -> RawEntity? {
    guard let name = element["name"], !name.isEmpty else {
      if report { log.note(element.location, "unreadable-source", "An <entity> without a name is ignored.") }
      return nil
    }
    var entity = RawEntity(name: name, location: element.location)
    entity.isAbstract = element["isAbstract"] == "YES"
    entity.parent = element["parentEntity"]
    for child in element.children {
      switch child.name {
      case "attribute":
        if let p = readAttribute(child, entity: name, report: report) { entity.properties.append(p) }
      case "relationship":
        if let p = readRelationship(child, entity: name, report: report) { entity.properties.append(p) }
      case "uniquenessConstraints":
        for constraint in child.children where constraint.name == "uniquenessConstraint" {
          let fields = constraint.children.filter { $0.name == "constraint" }.compactMap { $0["value"] }
          if !fields.isEmpty { entity.uniqueness.append(RawUniqueness(fields: fields, location: constraint.location, fromAttribute: false)) }
        }
      case "fetchIndex", "compoundIndexes":
        if report { log.note(child.location, "index-ignored", "The index <\(child.name)> of \(name) is ignored: indexes do not change what syncs.") }
      case "fetchedProperty":
        if report {
          log.note(child.location, "unreadable-source", "The fetched property \(child["name"] ?? "") of \(name) is not stored; it is ignored.")
        }
      case _ where Self.silentElements.contains(child.name):
        continue
      default:
        if report { log.note(child.location, "unreadable-source", "The element <\(child.name)> of entity \(name) is not understood; it is ignored.") }
      }
    }
    return entity
  }

  mutating func readAttribute(_ element: XMLTag, entity: String, report: Bool) -> RawProperty? {
    guard let name = element["name"], !name.isEmpty else {
      if report { log.note(element.location, "unreadable-source", "An <attribute> of \(entity) without a name is ignored.") }
      return nil
    }
    if element["transient"] == "YES" { return nil }
    if element["derived"] == "YES" {
      if report { log.note(element.location, "unreadable-source", "\(entity).\(name) is derived (computed by Core Data); it is not read.") }
      return nil
    }
    let type = element["attributeType"] ?? "Undefined"
    let kind: RawKind
    switch type {
    case _ where Self.stringTypes.contains(type): kind = .string
    case _ where Self.intTypes.contains(type): kind = .int
    case "Boolean": kind = .bool
    case "Date": kind = .date
    default:
      kind = .opaque(type)
      if report {
        if Self.opaqueTypes.contains(type) {
          log.note(
            element.location, "opaque-type",
            "\(entity).\(name): \(type) has no scenario kind; simulated as an opaque value of kind string: only which write it came from matters.")
        } else {
          log.note(
            element.location, "unreadable-source",
            "\(entity).\(name) has the attribute type \"\(type)\", which is not understood; simulated as an opaque value of kind string.")
        }
      }
    }
    var p = RawProperty(name: name, location: element.location, typeText: type, kind: kind, optional: element["optional"] == "YES")
    p.originalName = element["elementID"].flatMap { $0 == name ? nil : $0 }
    if let value = element["defaultValueString"] {
      p.hasDefault = true
      switch kind {
      case .string:
        if value.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" }) {
          p.defaultLiteral = ScenarioText.quoted(value)
        } else {
          p.defaultText = ScenarioText.quoted(value)
        }
      case .int:
        if let v = Int64(value.trimmingSpaces()) { p.defaultLiteral = String(v) } else { p.defaultText = value }
      case .bool:
        switch value.trimmingSpaces() {
        case "YES", "1", "true": p.defaultLiteral = "true"
        case "NO", "0", "false": p.defaultLiteral = "false"
        default: p.defaultText = value
        }
      default:
        p.defaultText = value
      }
    }
    return p
  }

  mutating func readRelationship(_ element: XMLTag, entity: String, report: Bool) -> RawProperty? {
    guard let name = element["name"], !name.isEmpty, let destination = element["destinationEntity"], !destination.isEmpty else {
      if report { log.note(element.location, "unreadable-source", "A <relationship> of \(entity) without a name or destination is ignored.") }
      return nil
    }
    if element["transient"] == "YES" { return nil }
    let toMany = element["toMany"] == "YES"
    let typeText = toMany ? "to-many \(destination)" : "to-one \(destination)"
    var p = RawProperty(
      name: name, location: element.location, typeText: typeText, kind: .relationship(destination, toMany: toMany),
      optional: element["optional"] == "YES")
    p.inverse = element["inverseName"]
    p.ordered = element["ordered"] == "YES"
    p.originalName = element["elementID"].flatMap { $0 == name ? nil : $0 }
    switch element["deletionRule"] ?? "Nullify" {
    case "Nullify": p.deleteRule = .nullify
    case "Cascade": p.deleteRule = .cascade
    case "Deny": p.deleteRule = .deny
    case "No Action": p.deleteRule = .noAction
    case let other:
      p.deleteRule = .nullify
      if report {
        log.note(element.location, "unreadable-source", "The deletion rule \"\(other)\" of \(entity).\(name) is not understood; read as Nullify.")
      }
    }
    return p
  }
}

extension String {
  func trimmingSpaces() -> String {
    var s = Substring(self)
    while s.first?.isWhitespace == true { s = s.dropFirst() }
    while s.last?.isWhitespace == true { s = s.dropLast() }
    return String(s)
  }
}
