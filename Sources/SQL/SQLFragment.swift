/// A value bound to a SQL parameter.
package enum SQLArgument: Sendable, Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A SQL fragment with its bound arguments, in order.
package struct SQLFragment: Sendable {
    /// The SQL text, with `?` placeholders until the compiler numbers them in its dialect.
    package var sql: String
    /// The arguments, in placeholder order.
    package var arguments: [SQLArgument]

    /// A fragment.
    package init(_ sql: String = "", _ arguments: [SQLArgument] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The two fragments one after the other.
    package static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.arguments + rhs.arguments)
    }
}

/// `count` comma-separated `?` placeholders.
package func placeholderList(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
}
