"""Protobuf messages as plain values (dicts, lists, hex bytes), comparable across protobuf versions."""


def as_plain(message):
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            out[field.name] = {k: _value(field.message_type.fields_by_name["value"], v) for k, v in sorted(value.items())}
        elif _repeated(field):
            out[field.name] = [_value(field, v) for v in value]
        elif field.message_type is not None:
            out[field.name] = as_plain(value) if message.HasField(field.name) else None
        else:
            out[field.name] = _value(field, value)
    return out


def _repeated(field) -> bool:
    """protobuf 6 has is_repeated (label is deprecated there); the stock stack's 3.20 has only label."""
    return field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED


def _value(field, value):
    if field.message_type is not None:
        return as_plain(value)
    if isinstance(value, bytes):
        return value.hex()
    return value
