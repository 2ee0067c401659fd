<?php

declare(strict_types=1);

/** Format cents as a decimal string: 1234 -> "12.34". */
function format_cents(int $cents): string
{
    return sprintf('%d.%02d', intdiv($cents, 100), $cents % 100);
}
