//! The string fields of events whose values upstream names as a closed
//! set in its comments but types as a plain `String`: typed here, with
//! [`Other`](ApprovalOutcome::Other) keeping any other string a line holds,
//! so a line reads back and writes out unchanged.

use crate::v2::encode::Out;
use crate::v2::event::rules::{FieldValue, Why};
use crate::v2::event::write::WriteValue;
use crate::wire::escape::write_str;
use crate::wire::tree::Json;
use std::fmt;
use std::hash::{Hash, Hasher};

macro_rules! open_names {
    ($(
        $(#[$m:meta])*
        $Name:ident {
            $( $(#[$vm:meta])* $Variant:ident = $wire:literal, )*
        }
    )*) => {$(
        $(#[$m])*
        ///
        /// Equal, and hashed, as the string on the wire: `Other` never holds
        /// a named value when built with `From`, and if built by hand it
        /// still equals the named variant of the same string.
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum $Name {
            $(
                #[doc = concat!("`\"", $wire, "\"`: ")]
                $(#[$vm])*
                $Variant,
            )*
            /// Any other string: what a newer (or another) engine writes.
            Other(String),
        }

        impl $Name {
            /// The string on the wire.
            #[must_use]
            pub fn as_str(&self) -> &str {
                match self {
                    $( $Name::$Variant => $wire, )*
                    $Name::Other(other) => other,
                }
            }
        }

        impl From<&str> for $Name {
            /// The named variant of `s`, or `Other`.
            fn from(s: &str) -> $Name {
                match s {
                    $( $wire => $Name::$Variant, )*
                    other => $Name::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $Name {
            /// The named variant of `s`, or `Other` holding it.
            fn from(s: String) -> $Name {
                match s.as_str() {
                    $( $wire => $Name::$Variant, )*
                    _ => $Name::Other(s),
                }
            }
        }

        impl From<&String> for $Name {
            fn from(s: &String) -> $Name {
                $Name::from(s.as_str())
            }
        }

        impl PartialEq for $Name {
            fn eq(&self, other: &$Name) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl Eq for $Name {}

        impl Hash for $Name {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }

        impl PartialEq<str> for $Name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $Name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl fmt::Display for $Name {
            /// The string on the wire.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FieldValue for $Name {
            const EXPECTED: &'static str = "a string";
            fn read(value: &Json<'_>) -> Result<$Name, Why> {
                value.string().map($Name::from).ok_or(Why::Wrong)
            }
        }

        impl WriteValue for $Name {
            #[inline]
            fn write<K: Out>(&self, k: &mut K) -> Result<(), K::Error> {
                write_str(k, self.as_str())
            }
        }

        impl ::serde::Serialize for $Name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    )*};
}

open_names! {
    /// What kind of steer a `steer_applied` reports (upstream writes the
    /// steer command's kind; a line without one reads as `Prompt`).
    ///
    /// ```
    /// use serve_command::v2::{AppliedSteerKind, Event, SteerKind};
    /// let event = Event::steer_applied(SteerKind::Command, "/diff", None);
    /// assert_eq!(event.to_line(), "{\"event\":\"steer_applied\",\"kind\":\"command\",\"content\":\"/diff\"}\n");
    /// assert_eq!(AppliedSteerKind::from("later"), AppliedSteerKind::Other("later".into()));
    /// ```
    AppliedSteerKind {
        /// text for the model, delivered into the running turn.
        Prompt = "prompt",
        /// a slash command for the engine itself.
        Command = "command",
    }

    /// How a requested approval settled (`approval_resolved`'s `outcome`).
    ///
    /// ```
    /// use serve_command::v2::{ApprovalOutcome, Event};
    /// let event = Event::approval_resolved("appr-7", ApprovalOutcome::AllowedOnce);
    /// assert_eq!(event.to_line(), "{\"event\":\"approval_resolved\",\"id\":\"appr-7\",\"outcome\":\"allowed_once\"}\n");
    /// ```
    ApprovalOutcome {
        /// the controller allowed the tool call, this once.
        AllowedOnce = "allowed_once",
        /// the controller rejected it.
        Rejected = "rejected",
        /// it settled without the controller's answer: the turn was
        /// interrupted.
        Cancelled = "cancelled",
    }

    /// How a nested sub-run ended (`subrun_finished`'s `status`, upstream's
    /// sub-run terminal in snake case).
    SubrunStatus {
        /// the sub-run's result was captured.
        Captured = "captured",
        /// the sub-run ended without a report.
        NoReport = "no_report",
        /// the sub-run used every step it had.
        MaxSteps = "max_steps",
        /// the sub-run yielded its context.
        ContextYield = "context_yield",
        /// the sub-run ran out of time.
        TimedOut = "timed_out",
        /// the sub-run failed.
        Failed = "failed",
        /// the sub-run was cancelled.
        Cancelled = "cancelled",
    }
}

impl From<crate::v1::SteerKind> for AppliedSteerKind {
    /// The kind of the steer command that was applied.
    fn from(kind: crate::v1::SteerKind) -> AppliedSteerKind {
        match kind {
            crate::v1::SteerKind::Prompt => AppliedSteerKind::Prompt,
            crate::v1::SteerKind::Command => AppliedSteerKind::Command,
        }
    }
}

impl From<bool> for ApprovalOutcome {
    /// An `approval` command's answer: `allow` true is `AllowedOnce`, false
    /// `Rejected`.
    fn from(allow: bool) -> ApprovalOutcome {
        if allow {
            ApprovalOutcome::AllowedOnce
        } else {
            ApprovalOutcome::Rejected
        }
    }
}
