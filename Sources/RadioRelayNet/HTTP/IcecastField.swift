import RadioRelaySystem

/// One member of an Icecast document — an XML element with text, or a JSON member — so that one list of fields
/// gives both spellings (`/admin/…` in XML, and with `format=json`; `/status-json.xsl`).
package struct IcecastField: Sendable, Equatable {
    package enum Value: Sendable, Equatable {
        case text(String)
        case number(Int)
    }

    package var name: String
    package var value: Value

    package init(_ name: String, _ text: String) {
        self.name = name
        value = .text(text)
    }

    package init(_ name: String, _ number: Int) {
        self.name = name
        value = .number(number)
    }

    /// `<name>text</name>`, the text escaped (an element's name is always one of ours).
    package var xml: String {
        switch value {
        case .text(let text): "<\(name)>\(Markup.escape(text))</\(name)>"
        case .number(let number): "<\(name)>\(number)</\(name)>"
        }
    }

    package var jsonValue: String {
        switch value {
        case .text(let text): JSONText.string(text)
        case .number(let number): JSONText.number(number)
        }
    }

    package static func json(_ fields: [IcecastField]) -> String {
        JSONText.object(fields.map { ($0.name, $0.jsonValue) })
    }

    package static func xml(_ fields: [IcecastField]) -> String { fields.map(\.xml).joined() }
}
