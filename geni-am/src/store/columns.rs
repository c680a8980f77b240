//! How the model's values are stored, in columns of the same types and
//! texts earlier releases wrote (so no migration is needed): states and
//! kinds as their names (TEXT), times as unix seconds (BIGINT,
//! [`UnixTime`]), and structured values as JSON text ([`Json`]).
//!
//! A stored value that does not read back (edited by hand, or written by
//! a newer version) fails the query with a [`CorruptValue`] naming its
//! column, which the store reports as [`super::StoreError::Corrupt`].

use super::MultiBackend;
use crate::model::{
    AddressRange, AllocationState, EventKind, JobKind, JobState, OperationalState,
    SliverAnnotations,
};
use chrono::{DateTime, Utc};
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, Queryable};
use diesel::expression::AsExpression;
use diesel::internal::derives::as_expression::Bound;
use diesel::pg::Pg;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{BigInt, Nullable, SingleValue, Text};
use diesel::sqlite::Sqlite;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::Write;

/// A stored value that does not read back as what its column holds.
#[derive(Debug, thiserror::Error)]
#[error("corrupt {what} in the store: `{value}`")]
pub struct CorruptValue {
    /// Which column (`table.column`).
    pub what: &'static str,
    /// The value found.
    pub value: String,
}

/// Makes a type usable as a value of SQL type `$sql` in queries, rows and
/// inserts (the `AsExpression`/`Queryable` half of what diesel's derives
/// write; the type's `ToSql`/`FromSql` come with it).
macro_rules! column_value {
    ($ty:ty, $sql:ty) => {
        impl AsExpression<$sql> for $ty {
            type Expression = Bound<$sql, Self>;

            fn as_expression(self) -> Self::Expression {
                Bound::new(self)
            }
        }

        impl AsExpression<$sql> for &$ty {
            type Expression = Bound<$sql, Self>;

            fn as_expression(self) -> Self::Expression {
                Bound::new(self)
            }
        }

        impl AsExpression<Nullable<$sql>> for $ty {
            type Expression = Bound<Nullable<$sql>, Self>;

            fn as_expression(self) -> Self::Expression {
                Bound::new(self)
            }
        }

        impl AsExpression<Nullable<$sql>> for &$ty {
            type Expression = Bound<Nullable<$sql>, Self>;

            fn as_expression(self) -> Self::Expression {
                Bound::new(self)
            }
        }

        impl<DB: Backend> ToSql<Nullable<$sql>, DB> for $ty
        where
            $ty: ToSql<$sql, DB>,
        {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
                ToSql::<$sql, DB>::to_sql(self, out)
            }
        }

        impl<DB: Backend> Queryable<$sql, DB> for $ty
        where
            Self: FromSql<$sql, DB>,
            $sql: SingleValue,
        {
            type Row = Self;

            fn build(row: Self) -> deserialize::Result<Self> {
                Ok(row)
            }
        }
    };
}

/// A time as the store keeps it: whole seconds, in a BIGINT column of
/// unix seconds. Fractions of a second are dropped on the way in; a
/// stored value out of chrono's range reads as the epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixTime(DateTime<Utc>);

impl UnixTime {
    /// The time `seconds` after the epoch (the epoch when out of range).
    fn from_seconds(seconds: i64) -> UnixTime {
        UnixTime(DateTime::from_timestamp(seconds, 0).unwrap_or_default())
    }

    /// The time as a date.
    pub fn get(self) -> DateTime<Utc> {
        self.0
    }
}

impl From<DateTime<Utc>> for UnixTime {
    fn from(time: DateTime<Utc>) -> Self {
        UnixTime::from_seconds(time.timestamp())
    }
}

impl From<UnixTime> for DateTime<Utc> {
    fn from(time: UnixTime) -> Self {
        time.0
    }
}

impl std::ops::Deref for UnixTime {
    type Target = DateTime<Utc>;

    fn deref(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl std::fmt::Display for UnixTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl ToSql<BigInt, Sqlite> for UnixTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.timestamp());
        Ok(IsNull::No)
    }
}

impl ToSql<BigInt, Pg> for UnixTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        // A BIGINT travels as 8 bytes in network order.
        out.write_all(&self.0.timestamp().to_be_bytes())?;
        Ok(IsNull::No)
    }
}

impl ToSql<BigInt, MultiBackend> for UnixTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> serialize::Result {
        out.set_value((BigInt, self));
        Ok(IsNull::No)
    }
}

impl<DB: Backend> FromSql<BigInt, DB> for UnixTime
where
    i64: FromSql<BigInt, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        i64::from_sql(bytes).map(UnixTime::from_seconds)
    }
}

column_value!(UnixTime, BigInt);

/// A value stored as JSON text in a TEXT column. The text is made once,
/// when the value is, and written as it is; a value read keeps the text
/// it was read from, so rows read and written back are unchanged byte for
/// byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Json<T> {
    value: T,
    text: String,
}

/// A type stored as JSON in one column.
pub trait JsonColumn: Serialize + DeserializeOwned + std::fmt::Debug {
    /// The column (`table.column`), for [`CorruptValue`].
    const COLUMN: &'static str;
}

impl<T: JsonColumn> Json<T> {
    /// `value` with its JSON text.
    pub fn new(value: T) -> Json<T> {
        // These types serialise without failing (no maps with non-string
        // keys, derived impls only); should one not, the empty text reads
        // back as corrupt, naming the column.
        let text = serde_json::to_string(&value).unwrap_or_default();
        Json { value, text }
    }

    /// The value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The value, owned.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The stored text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The value read from its stored `text`.
    fn parse(text: String) -> Result<Json<T>, CorruptValue> {
        match serde_json::from_str(&text) {
            Ok(value) => Ok(Json { value, text }),
            Err(_) => Err(CorruptValue {
                what: T::COLUMN,
                value: text,
            }),
        }
    }
}

impl Default for Json<SliverAnnotations> {
    /// What a new sliver stores: nothing observed yet, `{}` as earlier
    /// releases wrote it.
    fn default() -> Self {
        Json {
            value: SliverAnnotations::default(),
            text: "{}".to_owned(),
        }
    }
}

impl JsonColumn for SliverAnnotations {
    const COLUMN: &'static str = "slivers.annotations";
}

impl JsonColumn for crate::model::plan::NodePlan {
    const COLUMN: &'static str = "slivers.plan";
}

impl JsonColumn for serde_json::Value {
    const COLUMN: &'static str = "jobs.payload";
}

impl JsonColumn for Vec<String> {
    const COLUMN: &'static str = "slice_users.keys";
}

impl JsonColumn for Vec<AddressRange> {
    const COLUMN: &'static str = "link_ranges.ranges";
}

impl JsonColumn for super::components::ComponentDetails {
    const COLUMN: &'static str = "components.details";
}

impl<T: JsonColumn, DB: Backend> ToSql<Text, DB> for Json<T>
where
    str: ToSql<Text, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        self.text.as_str().to_sql(out)
    }
}

impl<T: JsonColumn, DB: Backend> FromSql<Text, DB> for Json<T>
where
    String: FromSql<Text, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        Ok(Json::parse(String::from_sql(bytes)?)?)
    }
}

/// Stores a named enum of the model as its name in the TEXT column
/// `$column`; a name it does not know reads as [`CorruptValue`].
macro_rules! named_column {
    ($ty:ty, $column:literal) => {
        impl<DB: Backend> ToSql<Text, DB> for $ty
        where
            str: ToSql<Text, DB>,
        {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
                self.as_str().to_sql(out)
            }
        }

        impl<DB: Backend> FromSql<Text, DB> for $ty
        where
            String: FromSql<Text, DB>,
        {
            fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
                let text = String::from_sql(bytes)?;
                Ok(<$ty>::parse(&text).ok_or(CorruptValue {
                    what: $column,
                    value: text,
                })?)
            }
        }

        column_value!($ty, Text);
    };
}

named_column!(AllocationState, "slivers.allocation_state");
named_column!(OperationalState, "slivers.operational_state");
named_column!(JobKind, "jobs.kind");
named_column!(JobState, "jobs.state");
named_column!(EventKind, "events.kind");

impl<T: JsonColumn> AsExpression<Text> for Json<T> {
    type Expression = Bound<Text, Self>;

    fn as_expression(self) -> Self::Expression {
        Bound::new(self)
    }
}

impl<T: JsonColumn> AsExpression<Text> for &Json<T> {
    type Expression = Bound<Text, Self>;

    fn as_expression(self) -> Self::Expression {
        Bound::new(self)
    }
}

impl<T: JsonColumn> AsExpression<Nullable<Text>> for Json<T> {
    type Expression = Bound<Nullable<Text>, Self>;

    fn as_expression(self) -> Self::Expression {
        Bound::new(self)
    }
}

impl<T: JsonColumn> AsExpression<Nullable<Text>> for &Json<T> {
    type Expression = Bound<Nullable<Text>, Self>;

    fn as_expression(self) -> Self::Expression {
        Bound::new(self)
    }
}

impl<T: JsonColumn, DB: Backend> ToSql<Nullable<Text>, DB> for Json<T>
where
    Json<T>: ToSql<Text, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        ToSql::<Text, DB>::to_sql(self, out)
    }
}

impl<T: JsonColumn, DB: Backend> Queryable<Text, DB> for Json<T>
where
    Self: FromSql<Text, DB>,
{
    type Row = Self;

    fn build(row: Self) -> deserialize::Result<Self> {
        Ok(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_the_text_it_was_read_from() {
        let text = r#"{"hostname":"n1"}"#.to_owned();
        let read = Json::<SliverAnnotations>::parse(text.clone()).unwrap();
        assert_eq!(read.text(), text);
        assert_eq!(read.value().hostname.as_deref(), Some("n1"));
        assert_eq!(Json::<SliverAnnotations>::default().text(), "{}");
        let err = Json::<Vec<String>>::parse("{".into()).unwrap_err();
        assert_eq!(err.what, "slice_users.keys");
    }

    #[test]
    fn times_keep_whole_seconds_and_out_of_range_ones_read_as_the_epoch() {
        assert_eq!(
            UnixTime::from_seconds(i64::MAX).get(),
            DateTime::<Utc>::default()
        );
        let t = UnixTime::from_seconds(1_714_564_800);
        assert_eq!(t.timestamp(), 1_714_564_800);
        let later = t.get() + chrono::TimeDelta::milliseconds(1_500);
        assert_eq!(UnixTime::from(later).timestamp(), 1_714_564_801);
        assert_eq!(UnixTime::from(later).timestamp_subsec_nanos(), 0);
    }
}
