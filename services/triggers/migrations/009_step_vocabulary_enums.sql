-- Step types, weekdays and ordinals became notify.common.v1 enums: the stored steps (proto JSON)
-- are rewritten from Novu's words to the enum names the service reads now. A timed digest's
-- ordinalValue becomes ordinalDays, the days the ordinal counts among. Values that are already
-- enum names, or name nothing, are left as they are.
CREATE FUNCTION pg_temp.enum_words(words jsonb, names jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_agg(coalesce(names -> (word #>> '{}'), word) ORDER BY position), '[]')
  FROM jsonb_array_elements(words) WITH ORDINALITY AS listed (word, position)
$$;

CREATE FUNCTION pg_temp.enum_step(step jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  step_types constant jsonb := '{"in_app": "STEP_TYPE_IN_APP", "email": "STEP_TYPE_EMAIL", "sms": "STEP_TYPE_SMS",
    "chat": "STEP_TYPE_CHAT", "push": "STEP_TYPE_PUSH", "digest": "STEP_TYPE_DIGEST", "delay": "STEP_TYPE_DELAY"}';
  weekdays constant jsonb := '{"monday": "WEEKDAY_MONDAY", "tuesday": "WEEKDAY_TUESDAY", "wednesday": "WEEKDAY_WEDNESDAY",
    "thursday": "WEEKDAY_THURSDAY", "friday": "WEEKDAY_FRIDAY", "saturday": "WEEKDAY_SATURDAY", "sunday": "WEEKDAY_SUNDAY"}';
  ordinals constant jsonb := '{"1": "ORDINAL_FIRST", "2": "ORDINAL_SECOND", "3": "ORDINAL_THIRD", "4": "ORDINAL_FOURTH",
    "5": "ORDINAL_FIFTH", "last": "ORDINAL_LAST"}';
  ordinal_days constant jsonb := '{"day": ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
    "weekday": ["monday", "tuesday", "wednesday", "thursday", "friday"], "weekend": ["saturday", "sunday"]}';
  timed jsonb := step #> '{metadata,timed}';
BEGIN
  IF step_types ? (step #>> '{template,type}') THEN
    step := jsonb_set(step, '{template,type}', step_types -> (step #>> '{template,type}'));
  END IF;
  IF jsonb_typeof(timed) = 'object' THEN
    IF jsonb_typeof(timed -> 'weekDays') = 'array' THEN
      timed := jsonb_set(timed, '{weekDays}', pg_temp.enum_words(timed -> 'weekDays', weekdays));
    END IF;
    IF ordinals ? (timed ->> 'ordinal') THEN
      timed := jsonb_set(timed, '{ordinal}', ordinals -> (timed ->> 'ordinal'));
    END IF;
    IF timed ? 'ordinalValue' THEN
      timed := timed - 'ordinalValue' || jsonb_build_object('ordinalDays',
        pg_temp.enum_words(coalesce(ordinal_days -> (timed ->> 'ordinalValue'), jsonb_build_array(timed -> 'ordinalValue')), weekdays));
    END IF;
    step := jsonb_set(step, '{metadata,timed}', timed);
  END IF;
  IF jsonb_typeof(step -> 'variants') = 'array' THEN
    step := jsonb_set(step, '{variants}', (
      SELECT coalesce(jsonb_agg(pg_temp.enum_step(variant) ORDER BY position), '[]')
      FROM jsonb_array_elements(step -> 'variants') WITH ORDINALITY AS listed (variant, position)));
  END IF;
  RETURN step;
END
$$;

UPDATE workflows SET steps = (
  SELECT coalesce(jsonb_agg(pg_temp.enum_step(step) ORDER BY position), '[]')
  FROM jsonb_array_elements(steps) WITH ORDINALITY AS listed (step, position))
WHERE jsonb_array_length(steps) > 0;

DROP FUNCTION pg_temp.enum_step(jsonb);
DROP FUNCTION pg_temp.enum_words(jsonb, jsonb);
