//! Exact data: what the producer sent is what the receiver gets, digit for digit; a key given twice and text with control characters are refused.
