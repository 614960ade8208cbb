-- Values are served as stored text: an integer imported as 42.0 was served as 42.0. Every
-- write path now stores trim_scale(value); this brings points written before it in line.
update point set value = trim_scale(value) where scale(value) > min_scale(value);
